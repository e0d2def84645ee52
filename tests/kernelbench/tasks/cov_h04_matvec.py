"""Matrix-vector product y = A @ v with A of shape (1537, 1021) and a 1-D vector v of length 1021."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, v):
        return torch.matmul(A, v)


M = 1537
K = 1021


def get_inputs():
    A = torch.randn(M, K)
    v = torch.randn(K)
    return [A, v]


def get_init_inputs():
    return []
