"""Matrix-scalar multiplication C = A * s in float16, A of shape (1537, 769), s a Python float given at
init."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, A):
        return A * self.scale


M = 1537
N = 769
scale = -3.7


def get_inputs():
    A = torch.randn(M, N, dtype=torch.float16)
    return [A]


def get_init_inputs():
    return [scale]
