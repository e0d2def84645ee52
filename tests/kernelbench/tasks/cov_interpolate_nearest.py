import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Nearest-neighbour upsampling by 2 after a conv."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x):
        return F.interpolate(self.conv(x), scale_factor=2, mode="nearest") * 0.5


def get_inputs():
    return [torch.randn(2, 3, 5, 6)]


def get_init_inputs():
    return []
