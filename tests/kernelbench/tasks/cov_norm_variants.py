import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """p-norms with p=1, 3 and inf, and F.normalize."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        n1 = torch.norm(x, p=1, dim=1, keepdim=True)
        n3 = torch.linalg.vector_norm(x, ord=3, dim=-1, keepdim=True)
        ninf = torch.linalg.vector_norm(x, ord=float("inf"), dim=1, keepdim=True)
        return F.normalize(x, p=2, dim=1) + n1 - n3 * ninf


def get_inputs():
    return [torch.randn(8, 32)]


def get_init_inputs():
    return []
