import torch
import torch.nn as nn


class Model(nn.Module):
    """Operators lowered through views: conv1d, max_pool1d, group norm, layer norm over two
    dimensions, batch norm in training mode, logsumexp."""

    def __init__(self, channels, groups, length):
        super().__init__()
        self.conv = nn.Conv1d(channels, 2 * channels, 3, padding=1)
        self.pool = nn.MaxPool1d(2)
        self.gn = nn.GroupNorm(groups, 2 * channels)
        self.ln = nn.LayerNorm([2 * channels, length // 2])
        self.bn = nn.BatchNorm1d(2 * channels)

    def forward(self, x):
        x = self.pool(self.conv(x))
        x = self.ln(self.gn(x))
        x = self.bn(x)
        return torch.logsumexp(x, dim=2)


batch, channels, groups, length = 4, 6, 3, 20


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [channels, groups, length]
