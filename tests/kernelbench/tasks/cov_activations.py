import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Many elementwise activations in one chain."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = F.leaky_relu(x, 0.2) + F.hardtanh(x, -0.5, 0.5) + F.hardswish(x) + F.hardsigmoid(x)
        y = y + F.mish(x) + F.silu(x) + F.gelu(x, approximate="tanh") + F.softsign(x)
        return y + F.logsigmoid(x) + F.relu6(x) + F.elu(x, alpha=0.5) + F.selu(x) + F.softplus(x, beta=2.0)


def get_inputs():
    return [torch.randn(8, 64) * 3]


def get_init_inputs():
    return []
