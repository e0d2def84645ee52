"""nn.Linear(300->257) followed by leaky_relu(0.05), softmax over dim=-1, and multiplication by a
learned per-feature scale."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features, out_features, negative_slope):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.negative_slope = negative_slope
        self.scale = nn.Parameter(torch.rand(out_features) + 0.5)

    def forward(self, x):
        x = self.linear(x)
        x = F.leaky_relu(x, negative_slope=self.negative_slope)
        x = torch.softmax(x, dim=-1)
        return x * self.scale


batch_size = 384
in_features = 300
out_features = 257
negative_slope = 0.05


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, negative_slope]
