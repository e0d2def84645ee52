import torch
import torch.nn as nn


class Model(nn.Module):
    """chunk and split into halves and pieces: a hand-written gated unit."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        p, q, r = torch.split(x, [4, 8, 4], dim=1)
        return a * torch.sigmoid(b) + torch.cat([p, r], dim=1) * q


def get_inputs():
    return [torch.randn(6, 16)]


def get_init_inputs():
    return []
