import torch
import torch.nn as nn


class Model(nn.Module):
    """A depthwise 2-D convolution with padding='same', a grouped 1-D convolution, a transposed
    2-D convolution with dilation, a dilated 1-D max pool with ceil_mode, a 2-D average pool
    with ceil_mode."""

    def __init__(self, channels):
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, 3, padding="same", groups=channels, bias=False)
        self.up = nn.ConvTranspose2d(channels, 3, (3, 2), stride=(2, 1), padding=(1, 0), dilation=2)
        self.avg = nn.AvgPool2d(3, stride=2, ceil_mode=True)
        self.conv1 = nn.Conv1d(channels, 2 * channels, 3, groups=channels, padding="valid")
        self.pool1 = nn.MaxPool1d(3, stride=2, padding=1, dilation=2, ceil_mode=True)

    def forward(self, x, s):
        return self.avg(self.up(self.depthwise(x))), self.pool1(self.conv1(s))


batch, channels = 2, 4


def get_inputs():
    return [torch.randn(batch, channels, 9, 8), torch.randn(batch, channels, 17)]


def get_init_inputs():
    return [channels]
