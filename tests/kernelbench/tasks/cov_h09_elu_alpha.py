"""ELU activation with alpha=0.7 on a 3-D (5, 37, 1031) tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return F.elu(x, alpha=self.alpha)


d0 = 5
d1 = 37
d2 = 1031
alpha = 0.7


def get_inputs():
    x = torch.randn(d0, d1, d2)
    return [x]


def get_init_inputs():
    return [alpha]
