"""nn.Conv2d(3->24, k=3) followed by GroupNorm(6 groups), tanh, and 2x2 max pooling on a (8, 3, 67, 97)
input."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups, pool_kernel):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.gn = nn.GroupNorm(num_groups, out_channels)
        self.pool = nn.MaxPool2d(pool_kernel)

    def forward(self, x):
        x = self.conv(x)
        x = self.gn(x)
        x = torch.tanh(x)
        return self.pool(x)


batch_size = 8
in_channels = 3
out_channels = 24
height = 67
width = 97
kernel_size = 3
num_groups = 6
pool_kernel = 2


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups, pool_kernel]
