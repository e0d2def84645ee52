import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d then PixelShuffle(2) and a ReLU."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, x):
        return torch.relu(self.shuffle(self.conv(x)))


def get_inputs():
    return [torch.randn(2, 3, 5, 5)]


def get_init_inputs():
    return []
