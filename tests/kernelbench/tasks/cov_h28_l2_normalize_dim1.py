"""L2 normalization along dim 1: x / x.norm(dim=1, keepdim=True) for a 3-D (8, 257, 513) tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / x.norm(p=2, dim=1, keepdim=True)


batch_size = 8
d1 = 257
d2 = 513


def get_inputs():
    x = torch.randn(batch_size, d1, d2)
    return [x]


def get_init_inputs():
    return []
