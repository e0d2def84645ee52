"""nn.Conv3d(4->8, k=3) followed by ReLU, a per-channel bias add, and a sum over the depth dim (dim=2)
on (4, 4, 17, 33, 33)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.1)

    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x)
        x = x + self.bias
        return torch.sum(x, dim=2)


batch_size = 4
in_channels = 4
out_channels = 8
depth = 17
height = 33
width = 33
kernel_size = 3
bias_shape = (out_channels, 1, 1, 1)


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
