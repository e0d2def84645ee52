import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """adaptive_avg_pool2d to 1 and to (2, 4), adaptive_avg_pool3d to 1."""

    def __init__(self):
        super().__init__()

    def forward(self, x, v):
        a = F.adaptive_avg_pool2d(x, 1).flatten(1)
        b = F.adaptive_avg_pool2d(x, (2, 4)).sum(dim=(2, 3))
        c = F.adaptive_avg_pool3d(v, (1, 1, 1)).flatten(1)
        return a + b + c


def get_inputs():
    return [torch.randn(2, 3, 8, 8), torch.randn(2, 3, 4, 4, 4)]


def get_init_inputs():
    return []
