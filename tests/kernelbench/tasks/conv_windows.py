import torch
import torch.nn as nn


class Model(nn.Module):
    """Grouped and dilated 3-D convolution, a transposed 3-D convolution with output_padding and
    groups, a grouped transposed 1-D convolution, and 3-D pools with ceil_mode, dilation and
    count_include_pad=False."""

    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv3d(channels, 2 * channels, 3, padding=1, dilation=(1, 2, 1), groups=2)
        self.up = nn.ConvTranspose3d(2 * channels, channels, (2, 3, 3), stride=2, padding=1,
                                     output_padding=1, groups=channels)
        self.max = nn.MaxPool3d(3, stride=2, padding=1, dilation=1, ceil_mode=True)
        self.avg = nn.AvgPool3d(2, stride=2, padding=1, count_include_pad=False)
        self.up1 = nn.ConvTranspose1d(channels, 2 * channels, 3, stride=2, groups=2, dilation=2)

    def forward(self, x, s):
        y = self.avg(self.max(self.up(self.conv(x))))
        return y, self.up1(s)


batch, channels = 2, 4


def get_inputs():
    return [torch.randn(batch, channels, 5, 6, 5), torch.randn(batch, channels, 7)]


def get_init_inputs():
    return [channels]
