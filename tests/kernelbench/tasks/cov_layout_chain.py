import torch
import torch.nn as nn


class Model(nn.Module):
    """permute, flatten, unflatten and transpose chained."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = x.permute(0, 2, 1).flatten(1)
        y = y.unflatten(1, (4, 6)).transpose(1, 2)
        return torch.tanh(y) * 2.0


def get_inputs():
    return [torch.randn(2, 6, 4)]


def get_init_inputs():
    return []
