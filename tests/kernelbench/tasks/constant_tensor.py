import torch
import torch.nn as nn


class Model(nn.Module):
    """A tensor constant made inside forward (torch.tensor of an attribute), and torch.multiply."""

    def __init__(self, limit):
        super().__init__()
        self.limit = limit

    def forward(self, x):
        x = torch.min(x, torch.tensor(self.limit))
        return torch.multiply(x, torch.tanh(x))


def get_inputs():
    return [torch.randn(128, 64)]


def get_init_inputs():
    return [0.5]
