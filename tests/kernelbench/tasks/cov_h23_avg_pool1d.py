"""1-D average pooling, kernel 5, stride 3, padding 2, count_include_pad=False, on (8, 48, 2001)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size, stride=stride, padding=padding, count_include_pad=False)

    def forward(self, x):
        return self.pool(x)


batch_size = 8
channels = 48
length = 2001
kernel_size = 5
stride = 3
padding = 2


def get_inputs():
    x = torch.randn(batch_size, channels, length)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
