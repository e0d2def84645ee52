import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """threshold, hardshrink, softshrink, tanhshrink, celu and rrelu (eval)."""

    def __init__(self):
        super().__init__()
        self.rrelu = nn.RReLU(0.1, 0.3)
        self.rrelu.eval()

    def forward(self, x):
        y = F.threshold(x, 0.1, -2.0) + F.hardshrink(x, 0.3) + F.softshrink(x, 0.4)
        return y + F.tanhshrink(x) + F.celu(x, alpha=0.7) + self.rrelu(x)


def get_inputs():
    return [torch.randn(6, 20) * 2]


def get_init_inputs():
    return []
