import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """addmm and baddbmm with alpha and beta, and bmm."""

    def __init__(self):
        super().__init__()

    def forward(self, bias, a, b, c, d):
        x = torch.addmm(bias, a, b, beta=0.5, alpha=2.0)
        y = torch.baddbmm(c, c, d, beta=1.5, alpha=0.5)
        return x.sum() + torch.bmm(c, d).mean(dim=0)


def get_inputs():
    return [torch.randn(4, 6), torch.randn(4, 5), torch.randn(5, 6), torch.randn(3, 4, 4), torch.randn(3, 4, 4)]


def get_init_inputs():
    return []
