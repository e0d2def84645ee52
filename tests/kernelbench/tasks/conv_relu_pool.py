import torch
import torch.nn as nn


class Model(nn.Module):
    """Level-2 style: convolution, ReLU, a bias of its own, max pooling, then flatten."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.02)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = x + self.bias
        x = self.pool(x)
        return torch.flatten(x, 1)


batch, in_channels, out_channels, size = 4, 3, 8, 16


def get_inputs():
    return [torch.randn(batch, in_channels, size, size)]


def get_init_inputs():
    return [in_channels, out_channels, 3]
