import torch
import torch.nn as nn


class Model(nn.Module):
    """Tensor constants made inside forward on the input's device (their values must survive
    tracing), in a minimum and a division."""

    def __init__(self, limit):
        super().__init__()
        self.limit = limit

    def forward(self, x):
        x = torch.min(x, torch.tensor(self.limit, device=x.device))
        return x / torch.tensor(4.0, device=x.device, dtype=x.dtype)


def get_inputs():
    return [torch.randn(64, 32)]


def get_init_inputs():
    return [0.25]
