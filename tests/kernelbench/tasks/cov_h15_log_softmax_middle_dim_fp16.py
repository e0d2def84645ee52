"""LogSoftmax over the middle dimension (dim=1) of a (8, 1001, 129) float16 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.log_softmax(x, dim=self.dim)


batch_size = 8
d1 = 1001
d2 = 129
softmax_dim = 1


def get_inputs():
    x = torch.randn(batch_size, d1, d2, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return [softmax_dim]
