import torch
import torch.nn as nn


class Model(nn.Module):
    """roll, tile, movedim, rot90, trace, log2/log10/log1p/expm1/exp2, addcmul/addcdiv, lerp, logaddexp."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        a = torch.roll(x, 2, dims=1) + torch.roll(x, shifts=(1, -2), dims=(1, 2)) + torch.roll(x, 5)
        b = x.tile(1, 2, 1)[:, :6] + torch.movedim(torch.rot90(x, 1, (1, 2)), 1, 2) * torch.trace(x[0, :, :6])
        c = torch.log2(x.abs() + 1) + torch.log10(y.abs() + 1) + torch.log1p(x.abs())
        c = c + torch.expm1(y) + torch.exp2(x)
        d = torch.addcmul(x, x, y, value=0.5) + torch.addcdiv(x, x, y.abs() + 1, value=2)
        return a + b + c + d + torch.lerp(x, y, 0.3) + torch.logaddexp(x, y)


def get_inputs():
    return [torch.randn(4, 6, 6), torch.randn(4, 6, 6)]


def get_init_inputs():
    return []
