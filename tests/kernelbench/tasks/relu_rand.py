import torch
import torch.nn as nn


class Model(nn.Module):
    """ReLU of non-negative inputs: returning the input itself has the right values."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.rand(1024, 4096)]


def get_init_inputs():
    return []
