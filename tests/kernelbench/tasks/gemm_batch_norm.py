import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer, a scale, and batch norm in training mode (the batch's statistics)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.randn(out_features))
        self.bn = nn.BatchNorm1d(out_features)

    def forward(self, x):
        x = self.fc(x) * self.scale
        return self.bn(x)


def get_inputs():
    return [torch.rand(64, 96)]


def get_init_inputs():
    return [96, 48]
