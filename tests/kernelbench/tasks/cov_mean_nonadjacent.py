import torch
import torch.nn as nn


class Model(nn.Module):
    """Means and sums over non-adjacent and negative dims."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.mean(dim=[1, 3], keepdim=True) * x.sum(dim=(-2, -1), keepdim=True)


def get_inputs():
    return [torch.randn(2, 3, 4, 5)]


def get_init_inputs():
    return []
