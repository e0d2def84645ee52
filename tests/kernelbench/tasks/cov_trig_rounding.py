import torch
import torch.nn as nn


class Model(nn.Module):
    """sin/cos features of a linear layer, rounding (floor, ceil, round half to even, trunc)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 16)

    def forward(self, x):
        y = self.fc(x)
        waves = torch.sin(y) * torch.cos(2.0 * y)
        steps = torch.floor(y * 4.0) + torch.ceil(y) + torch.round(y * 2.0) + torch.trunc(y * 3.0)
        return waves + steps * 0.25


def get_inputs():
    return [torch.randn(8, 10)]


def get_init_inputs():
    return []
