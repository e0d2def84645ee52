import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Cross entropy with label smoothing, with an ignored class (mean over the rows kept) and
    summed."""

    def __init__(self, smoothing: float):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        kept = F.cross_entropy(logits, targets, label_smoothing=self.smoothing, ignore_index=3)
        summed = F.cross_entropy(logits, targets, label_smoothing=0.05, reduction="sum")
        return kept + 0.01 * summed


batch, classes = 96, 10


def get_inputs():
    return [torch.randn(batch, classes), torch.randint(0, classes, (batch,))]


def get_init_inputs():
    return [0.2]
