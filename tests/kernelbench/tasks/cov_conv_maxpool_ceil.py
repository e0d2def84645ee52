import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d, MaxPool2d (return_indices=False, ceil_mode) and a bias."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3)
        self.pool = nn.MaxPool2d(2, return_indices=False, ceil_mode=True)
        self.bias = nn.Parameter(torch.randn(6, 1, 1))

    def forward(self, x):
        return self.pool(self.conv(x)) + self.bias


def get_inputs():
    return [torch.randn(2, 3, 11, 11)]


def get_init_inputs():
    return []
