import torch
import torch.nn as nn


class Model(nn.Module):
    """diag(a) @ B, the diagonal of a product, hinge loss, reverse and masked cumsum, prod."""

    def __init__(self):
        super().__init__()

    def forward(self, a, b, x, mask):
        left = torch.diag(a) @ b
        trace = torch.diag(b @ b.T, 1).sum() + torch.diag(b[:, :4], -1).sum()
        hinge = torch.mean(torch.clamp(1 - x * torch.sign(b[:, :1]), min=0))
        rev = torch.cumsum(x.flip(1), dim=1).flip(1)
        masked = torch.cumsum(x * mask, dim=1)
        product = torch.prod(x, dim=1, keepdim=True)
        return left.sum(dim=1, keepdim=True) + trace + hinge + rev + masked + product


def get_inputs():
    return [torch.randn(6), torch.randn(6, 5), torch.randn(6, 5), torch.rand(6, 5) > 0.5]


def get_init_inputs():
    return []
