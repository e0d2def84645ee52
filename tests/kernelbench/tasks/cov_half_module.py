import torch
import torch.nn as nn


class Model(nn.Module):
    """A block whose constructor converts its own parameters to float16 (`self.half()`), as
    mixed-precision code does: the tracer cannot build it on fake tensors and builds it for real."""

    def __init__(self, features: int, hidden: int):
        super().__init__()
        self.proj = nn.Linear(features, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.half()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(torch.nn.functional.silu(self.proj(x)))


batch, features, hidden = 64, 96, 160


def get_inputs():
    return [torch.randn(batch, features, dtype=torch.float16)]


def get_init_inputs():
    return [features, hidden]
