"""nn.LayerNorm over the last two dims (57, 113) of a (8, 33, 57, 113) tensor, with affine weight and bias."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, normalized_shape, eps):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape, eps=eps)

    def forward(self, x):
        return self.ln(x)


batch_size = 8
channels = 33
height = 57
width = 113
eps = 1e-5


def get_inputs():
    x = torch.randn(batch_size, channels, height, width) * 2.0 + 0.5
    return [x]


def get_init_inputs():
    return [(height, width), eps]
