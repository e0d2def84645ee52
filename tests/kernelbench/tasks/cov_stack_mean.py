import torch
import torch.nn as nn


class Model(nn.Module):
    """torch.stack along a new leading dimension, then a mean over it."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return torch.stack([x, y, x * y], dim=0).mean(dim=0) + torch.stack((x, y), dim=-1).amax(dim=-1)


def get_inputs():
    return [torch.randn(5, 7), torch.randn(5, 7)]


def get_init_inputs():
    return []
