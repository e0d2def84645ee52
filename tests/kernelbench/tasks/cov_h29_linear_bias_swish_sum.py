"""nn.Linear(767->513) followed by an extra bias add, Swish (x * sigmoid(x)), and a sum over dim=1 with
keepdim=True."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.linear(x)
        x = x + self.bias
        x = x * torch.sigmoid(x)
        return torch.sum(x, dim=1, keepdim=True)


batch_size = 129
in_features = 767
out_features = 513
bias_shape = (out_features,)


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
