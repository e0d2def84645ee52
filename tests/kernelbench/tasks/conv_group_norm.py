import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d, GroupNorm (3 groups of 4 channels, affine), then a ReLU and a scale."""

    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.gn = nn.GroupNorm(groups, out_channels)
        with torch.no_grad():  # affine parameters that are not the identity
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return torch.relu(self.gn(self.conv(x))) * 0.5


def get_inputs():
    return [torch.randn(2, 4, 10, 10)]


def get_init_inputs():
    return [4, 12, 3]
