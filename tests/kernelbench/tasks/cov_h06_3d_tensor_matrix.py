"""3-D tensor times matrix: (7, 193, 311) @ (311, 157) -> (7, 193, 157) via torch.matmul broadcasting."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


N = 7
M = 193
K = 311
L = 157


def get_inputs():
    A = torch.randn(N, M, K)
    B = torch.randn(K, L)
    return [A, B]


def get_init_inputs():
    return []
