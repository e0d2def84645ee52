"""nn.Linear(1023->385) followed by nn.LayerNorm(385), hardtanh clipping to [-0.5, 0.8], and a residual
add of the linear output."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features, out_features, min_val, max_val):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x):
        y = self.linear(x)
        z = self.norm(y)
        z = F.hardtanh(z, min_val=self.min_val, max_val=self.max_val)
        return z + y


batch_size = 96
in_features = 1023
out_features = 385
min_val = -0.5
max_val = 0.8


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, min_val, max_val]
