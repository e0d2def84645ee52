"""nn.ConvTranspose1d 33->17 channels, kernel 7, stride 3, padding 2, output_padding 1 on (6, 33, 517)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv_t = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=stride,
                                         padding=padding, output_padding=output_padding, bias=True)

    def forward(self, x):
        return self.conv_t(x)


batch_size = 6
in_channels = 33
out_channels = 17
length = 517
kernel_size = 7
stride = 3
padding = 2
output_padding = 1


def get_inputs():
    x = torch.randn(batch_size, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding]
