"""Depthwise nn.Conv2d (groups=in_channels=24) with a non-square 3x5 kernel, stride (2, 1), padding (1,
2) on (8, 24, 67, 131)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, stride=stride,
                              padding=padding, groups=channels, bias=False)

    def forward(self, x):
        return self.conv(x)


batch_size = 8
channels = 24
height = 67
width = 131
kernel_size = (3, 5)
stride = (2, 1)
padding = (1, 2)


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [channels, kernel_size, stride, padding]
