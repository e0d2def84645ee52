"""nn.Conv2d(16->32, k=5, padding=2) followed by a per-channel bias add, ReLU, and avg_pool2d(kernel 3,
stride 2) on (4, 16, 75, 53)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.1)

    def forward(self, x):
        x = self.conv(x)
        x = x + self.bias
        x = torch.relu(x)
        return F.avg_pool2d(x, kernel_size=3, stride=2)


batch_size = 4
in_channels = 16
out_channels = 32
height = 75
width = 53
kernel_size = 5
padding = 2
bias_shape = (out_channels, 1, 1)


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, padding, bias_shape]
