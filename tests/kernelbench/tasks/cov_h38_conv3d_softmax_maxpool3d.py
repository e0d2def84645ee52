"""nn.Conv3d(3->12, k=3) followed by softmax over channels (dim=1) and 2x2x2 max pooling on (2, 3, 16,
32, 32)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.pool_kernel = pool_kernel

    def forward(self, x):
        x = self.conv(x)
        x = torch.softmax(x, dim=1)
        return F.max_pool3d(x, kernel_size=self.pool_kernel)


batch_size = 2
in_channels = 3
out_channels = 12
depth = 16
height = 32
width = 32
kernel_size = 3
pool_kernel = 2


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_kernel]
