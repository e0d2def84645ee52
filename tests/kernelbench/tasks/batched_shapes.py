import torch
import torch.nn as nn


class Model(nn.Module):
    """A 4-D by 2-D matmul (batch dims flattened through a view), adaptive average pools, and a
    matmul reading a transposed operand (`.T`) in place."""

    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        y = torch.matmul(a, b)
        pooled = torch.nn.functional.adaptive_avg_pool2d(y, (4, 1))
        whole = torch.nn.functional.adaptive_avg_pool2d(y, 1)
        gram = torch.matmul(b.T, b).mean()
        return pooled * whole + gram


def get_inputs():
    return [torch.randn(2, 3, 8, 16), torch.randn(16, 5)]


def get_init_inputs():
    return []
