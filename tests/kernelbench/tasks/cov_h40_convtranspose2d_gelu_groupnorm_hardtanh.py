"""nn.ConvTranspose2d(24->12, k=3, stride 2, padding 1, output_padding 1) followed by GELU, GroupNorm(4
groups), and hardtanh."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, num_groups):
        super().__init__()
        self.conv_t = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                         padding=padding, output_padding=output_padding)
        self.gn = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv_t(x)
        x = F.gelu(x)
        x = self.gn(x)
        return F.hardtanh(x, min_val=-1.0, max_val=1.0)


batch_size = 4
in_channels = 24
out_channels = 12
height = 31
width = 45
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
num_groups = 4


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, num_groups]
