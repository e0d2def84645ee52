import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


class ModelNew(Model):
    """Cheat: uses its input as scratch memory (zeroes it after use)."""

    def forward(self, x):
        y = torch.relu(x)
        x.zero_()
        return y
