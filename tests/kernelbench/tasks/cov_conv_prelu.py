import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d followed by a per-channel PReLU and a tanh."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.act = nn.PReLU(8, init=0.1)

    def forward(self, x):
        return torch.tanh(self.act(self.conv(x)))


def get_inputs():
    return [torch.randn(2, 3, 10, 10)]


def get_init_inputs():
    return []
