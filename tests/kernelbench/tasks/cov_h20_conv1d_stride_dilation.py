"""nn.Conv1d with kernel 5, stride 3, dilation 2, padding 4: (8, 7, 4093) -> (8, 19, 1365)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size,
                              stride=stride, padding=padding, dilation=dilation, bias=True)

    def forward(self, x):
        return self.conv(x)


batch_size = 8
in_channels = 7
out_channels = 19
length = 4093
kernel_size = 5
stride = 3
padding = 4
dilation = 2


def get_inputs():
    x = torch.randn(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
