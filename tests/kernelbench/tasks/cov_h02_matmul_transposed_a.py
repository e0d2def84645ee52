"""Matrix multiplication with a transposed left operand: C = A.T @ B, A is (K, M), B is (K, N)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A.transpose(0, 1), B)


K = 1023
M = 255
N = 383


def get_inputs():
    A = torch.randn(K, M)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
