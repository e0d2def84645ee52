import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d, BatchNorm2d in training mode (the batch's statistics), a scale: L2 73's shape."""

    def __init__(self, in_channels, out_channels, kernel_size, scaling_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bn = nn.BatchNorm2d(out_channels)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        return self.bn(self.conv(x)) * self.scaling_factor


def get_inputs():
    return [torch.randn(4, 3, 12, 12)]


def get_init_inputs():
    return [3, 8, 3, 2.0]
