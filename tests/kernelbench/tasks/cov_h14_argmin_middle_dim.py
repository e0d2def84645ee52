"""Argmin over the middle dimension given as a negative index (dim=-2) of a (12, 511, 255) tensor ->
(12, 255) int64."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.argmin(x, dim=self.dim)


d0 = 12
d1 = 511
d2 = 255
reduce_dim = -2


def get_inputs():
    x = torch.randn(d0, d1, d2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
