import torch
import torch.nn as nn


class Model(nn.Module):
    """Level-2 style: a linear layer, a scale, GELU, then a row softmax."""

    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        x = self.fc(x)
        x = torch.nn.functional.gelu(x * self.scale)
        return torch.softmax(x, dim=1)


batch, in_features, out_features = 64, 128, 96


def get_inputs():
    return [torch.rand(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features, 0.5]
