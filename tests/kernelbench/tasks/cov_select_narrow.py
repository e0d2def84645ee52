import torch
import torch.nn as nn


class Model(nn.Module):
    """select and narrow views feeding a sum."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.select(1, 2) + x.narrow(1, 1, 3).sum(dim=1) - x[:, -1]


def get_inputs():
    return [torch.randn(4, 6, 10)]


def get_init_inputs():
    return []
