import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear, GroupNorm, swish (x * sigmoid(x))."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(24, 32)
        self.gn = nn.GroupNorm(4, 32)

    def forward(self, x):
        y = self.gn(self.fc(x))
        return y * torch.sigmoid(y)


def get_inputs():
    return [torch.randn(8, 24)]


def get_init_inputs():
    return []
