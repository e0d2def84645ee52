import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """GELU written out with erf, adaptive max pooling, a Frobenius normalization."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = 0.5 * x * (1.0 + torch.erf(x / 1.4142135623730951))
        pooled = F.adaptive_max_pool2d(y, (2, 2)) + F.adaptive_max_pool2d(y, 1)
        return pooled / torch.norm(x, p="fro")


def get_inputs():
    return [torch.randn(2, 3, 8, 8)]


def get_init_inputs():
    return []
