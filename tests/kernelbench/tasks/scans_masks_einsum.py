import torch
import torch.nn as nn


class Model(nn.Module):
    """cumprod, a reverse cumsum through flip, triu/tril with diagonals, and einsum contractions
    (a 4-D tensor times a matrix, a batched contraction with permuted output, a reduction)."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, a, b, m, p, q):
        scans = torch.cumprod(x, dim=self.dim) + torch.cumsum(x.flip(self.dim), dim=self.dim).flip(self.dim)
        masks = torch.triu(m, diagonal=1) - torch.tril(m, -1)
        e1 = torch.einsum("bijl,lk->bijk", a, b)
        e2 = torch.einsum("bil,bjl->jbi", p, q)
        e3 = torch.einsum("bijl->bl", a)
        return scans, masks, e1, e2, e3


def get_inputs():
    return [
        torch.rand(4, 12) + 0.5,
        torch.randn(2, 3, 5, 6),
        torch.randn(6, 7),
        torch.randn(5, 8),
        torch.randn(2, 5, 6),
        torch.randn(2, 4, 6),
    ]


def get_init_inputs():
    return [1]
