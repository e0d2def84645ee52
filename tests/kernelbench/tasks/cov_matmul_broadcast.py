import torch
import torch.nn as nn


class Model(nn.Module):
    """matmul of batched by 2-D, 2-D by batched, and matrix by vector."""

    def __init__(self):
        super().__init__()

    def forward(self, a, b, m, v):
        left = torch.matmul(m, a.transpose(1, 2)).transpose(1, 2)[:, :, :1]
        return torch.matmul(a, b) + left + torch.matmul(a, v).unsqueeze(-1)


def get_inputs():
    return [torch.randn(3, 4, 5), torch.randn(5, 6), torch.randn(7, 5), torch.randn(5)]


def get_init_inputs():
    return []
