import torch
import torch.nn as nn


class Model(nn.Module):
    """any/all, var_mean/std_mean, sum with dtype, matrix and vector norms, new_zeros/new_full."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        flags = torch.any(x > 1.0, dim=1).float()
        flags = flags + torch.all(x > -3.0, dim=1, keepdim=True).float().squeeze(1)
        var, mean = torch.var_mean(x, dim=1)
        std, mean2 = torch.std_mean(x, dim=1, keepdim=True)
        norms = torch.linalg.norm(x, dim=(1, 2)) + torch.linalg.matrix_norm(x)
        norms = norms + torch.linalg.norm(x, dim=2).sum(-1)
        base = x.new_zeros(x.shape[0], x.shape[2]) + x.new_full((x.shape[2],), 0.5)
        total = flags + var + mean + (std * mean2).squeeze(1) + norms.unsqueeze(-1) + base
        return total + x.sum(dim=1, dtype=torch.float32)


def get_inputs():
    return [torch.randn(3, 5, 7)]


def get_init_inputs():
    return []
