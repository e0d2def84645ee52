import torch
import torch.nn as nn


class Model(nn.Module):
    """addmm and baddbmm with alpha and beta, and bmm."""

    def __init__(self):
        super().__init__()

    def forward(self, bias, a, b, c, d):
        x = torch.addmm(bias, a, b, beta=0.5, alpha=2.0)
        y = torch.baddbmm(c, c, d, beta=1.5, alpha=0.5)
        return x.sum() + torch.bmm(c, d).mean(dim=0) + y[0, :, :4].sum(dim=0, keepdim=True)


def get_inputs():
    a, b = torch.randn(4, 5), torch.randn(5, 6)
    return [torch.randn(4, 6), a, b, torch.randn(3, 4, 4), torch.randn(3, 4, 4)]


def get_init_inputs():
    return []
