import torch
import torch.nn as nn


class Model(nn.Module):
    """Two parallel convolutions concatenated along channels (inception style), ReLU."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 4, 3, padding=1)
        self.b = nn.Conv2d(3, 2, 1)

    def forward(self, x):
        return torch.relu(torch.cat([self.a(x), self.b(x)], dim=1))


def get_inputs():
    return [torch.randn(2, 3, 6, 6)]


def get_init_inputs():
    return []
