import torch
import torch.nn as nn


class Model(nn.Module):
    """where and masked_fill with computed masks."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        z = torch.where(x > y, x, y * 2.0)
        return z.masked_fill(z.abs() < 0.3, 0.0) + torch.where(x < 0, 1.0, -1.0)


def get_inputs():
    return [torch.randn(6, 8), torch.randn(6, 8)]


def get_init_inputs():
    return []
