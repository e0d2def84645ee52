import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """In-place operators: a conv with ReLU(inplace=True), hardtanh_ and a value read after its update."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        y = self.act(self.conv(x))
        z = y * 2.0
        z.clamp_(max=1.0)
        w = F.hardtanh(z - 0.5, inplace=True)
        return w + z


def get_inputs():
    return [torch.randn(2, 3, 8, 8)]


def get_init_inputs():
    return []
