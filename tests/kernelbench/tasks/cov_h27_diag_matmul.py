"""Diagonal-matrix product torch.diag(a) @ B, a of length 1409 and B of shape (1409, 511); diag(a) is
1409x1409."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, B):
        return torch.diag(a) @ B


N = 1409
M = 511


def get_inputs():
    a = torch.randn(N)
    B = torch.randn(N, M)
    return [a, B]


def get_init_inputs():
    return []
