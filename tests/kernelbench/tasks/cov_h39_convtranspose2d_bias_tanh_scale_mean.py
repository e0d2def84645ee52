"""nn.ConvTranspose2d(32->16, k=4, stride 2, padding 1) followed by bias add, tanh, scaling, and a
spatial mean over dims (2, 3) with keepdim=True."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias_shape, scale):
        super().__init__()
        self.conv_t = nn.ConvTranspose2d(in_channels, out_channels, kernel_size,
                                         stride=stride, padding=padding)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.1)
        self.scale = scale

    def forward(self, x):
        x = self.conv_t(x)
        x = x + self.bias
        x = torch.tanh(x)
        x = x * self.scale
        return torch.mean(x, dim=(2, 3), keepdim=True)


batch_size = 8
in_channels = 32
out_channels = 16
height = 33
width = 47
kernel_size = 4
stride = 2
padding = 1
bias_shape = (out_channels, 1, 1)
scale = 1.75


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, bias_shape, scale]
