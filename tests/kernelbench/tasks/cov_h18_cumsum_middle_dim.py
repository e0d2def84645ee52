"""Inclusive cumulative sum along the middle dimension (dim=1) of a (32, 1025, 33) tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x, dim=self.dim)


d0 = 32
d1 = 1025
d2 = 33
scan_dim = 1


def get_inputs():
    x = torch.randn(d0, d1, d2)
    return [x]


def get_init_inputs():
    return [scan_dim]
