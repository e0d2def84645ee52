import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv3d, softmax over channels, MaxPool3d."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(2, 4, 3)
        self.pool = nn.MaxPool3d(2)

    def forward(self, x):
        return self.pool(torch.softmax(self.conv(x), dim=1))


def get_inputs():
    return [torch.randn(2, 2, 6, 6, 6)]


def get_init_inputs():
    return []
