"""Reverse (suffix) cumulative sum along dim=0 via flip-cumsum-flip on a (2049, 257) tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x.flip(self.dim), dim=self.dim).flip(self.dim)


d0 = 2049
d1 = 257
scan_dim = 0


def get_inputs():
    x = torch.randn(d0, d1)
    return [x]


def get_init_inputs():
    return [scan_dim]
