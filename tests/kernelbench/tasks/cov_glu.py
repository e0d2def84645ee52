import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """GLU after a linear layer."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 20)

    def forward(self, x):
        return F.glu(self.fc(x), dim=-1)


def get_inputs():
    return [torch.randn(8, 12)]


def get_init_inputs():
    return []
