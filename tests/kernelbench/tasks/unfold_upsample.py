import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """F.unfold (im2col with padding, stride and dilation) feeding a product; bilinear
    upsampling to an odd size with and without aligned corners, and by a scale factor; adaptive
    average and max pooling to sizes that do not divide the input (windows of unequal length);
    nearest resampling to sizes and by factors that are not whole (26 -> 22 is a size where
    float32 rounding moves PyTorch's index for output 11 off floor(11 * 26 / 22))."""

    def __init__(self, channels, out_features):
        super().__init__()
        self.proj = nn.Linear(channels * 3 * 2, out_features)

    def forward(self, x):
        cols = F.unfold(x, (3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
        y = self.proj(cols.transpose(1, 2))
        up = F.interpolate(x, size=(13, 9), mode="bilinear", align_corners=True)
        down = F.interpolate(x, size=(5, 17), mode="bilinear", align_corners=False)
        scaled = F.interpolate(x, scale_factor=1.5, mode="bilinear")
        avg = F.adaptive_avg_pool2d(x, (3, 4))
        peak = F.adaptive_max_pool2d(x, (4, 3))
        near = F.interpolate(x, size=(22, 6), mode="nearest")
        near_scaled = F.interpolate(x, scale_factor=(1.7, 0.65), mode="nearest")
        return y, up, down, scaled, avg, peak, near, near_scaled


batch, channels, height, width = 2, 3, 7, 26


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels, 16]
