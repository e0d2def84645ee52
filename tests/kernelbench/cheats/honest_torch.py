import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


class ModelNew(Model):
    """Not a cheat: the control that every guard must let through."""

    def forward(self, x):
        return torch.relu(x)
