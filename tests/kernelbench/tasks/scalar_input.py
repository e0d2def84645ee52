import torch
import torch.nn as nn


class Model(nn.Module):
    """Upper-case argument names (torch.export renames them) and a Python float argument."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        return torch.sigmoid(A) * s


def get_inputs():
    return [torch.randn(64, 96), 2.5]


def get_init_inputs():
    return []
