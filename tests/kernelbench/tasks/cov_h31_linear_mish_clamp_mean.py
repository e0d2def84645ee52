"""nn.Linear(511->1001) followed by Mish, clamp to [-0.3, 2.5], and a mean over the last dim
(keepdim=False)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features, out_features, clamp_min, clamp_max):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.linear(x)
        x = F.mish(x)
        x = torch.clamp(x, min=self.clamp_min, max=self.clamp_max)
        return torch.mean(x, dim=-1)


batch_size = 200
in_features = 511
out_features = 1001
clamp_min = -0.3
clamp_max = 2.5


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, clamp_min, clamp_max]
