"""nn.Conv2d(8->16, k=3, padding=1) followed by InstanceNorm2d, leaky_relu(0.2), and a mean over the
channel dim (keepdim=True)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, negative_slope):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.inorm = nn.InstanceNorm2d(out_channels)
        self.negative_slope = negative_slope

    def forward(self, x):
        x = self.conv(x)
        x = self.inorm(x)
        x = F.leaky_relu(x, negative_slope=self.negative_slope)
        return torch.mean(x, dim=1, keepdim=True)


batch_size = 6
in_channels = 8
out_channels = 16
height = 91
width = 61
kernel_size = 3
negative_slope = 0.2


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, negative_slope]
