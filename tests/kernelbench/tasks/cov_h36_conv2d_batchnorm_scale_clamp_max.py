"""nn.Conv2d(12->20, k=(3,5), stride 2) followed by BatchNorm2d (training-mode batch statistics),
scaling, clamp to [0, 6], and a max over channels."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, scale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride)
        self.bn = nn.BatchNorm2d(out_channels)
        self.scale = scale

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = x * self.scale
        x = torch.clamp(x, min=0.0, max=6.0)
        return torch.max(x, dim=1).values


batch_size = 8
in_channels = 12
out_channels = 20
height = 63
width = 85
kernel_size = (3, 5)
stride = 2
scale = 2.5


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, scale]
