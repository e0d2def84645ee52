"""Sum reduction over dim=0 with keepdim=True on a (511, 33, 97) tensor -> (1, 33, 97)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=True)


d0 = 511
d1 = 33
d2 = 97
reduce_dim = 0


def get_inputs():
    x = torch.randn(d0, d1, d2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
