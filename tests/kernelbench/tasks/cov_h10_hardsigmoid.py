"""Hardsigmoid activation on a (129, 3, 2049) tensor with inputs spread over the saturating range."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.hardsigmoid(x)


d0 = 129
d1 = 3
d2 = 2049


def get_inputs():
    x = torch.randn(d0, d1, d2) * 3.0
    return [x]


def get_init_inputs():
    return []
