import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d then InstanceNorm2d with affine, and one without."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 6, 3, padding=1)
        self.inorm = nn.InstanceNorm2d(6, affine=True)
        self.plain = nn.InstanceNorm2d(6)

    def forward(self, x):
        y = self.conv(x)
        return self.inorm(y) + self.plain(torch.relu(y))


def get_inputs():
    return [torch.randn(2, 4, 8, 8)]


def get_init_inputs():
    return []
