import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Class-weighted losses (a segmentation nll_loss over [N, C, H, W] with an ignore_index, a
    weighted cross_entropy), a triplet loss with the distance swap, and convolutions with
    padding='same' and even kernels (PyTorch pads the odd one more after)."""

    def __init__(self, channels, classes):
        super().__init__()
        self.conv1 = nn.Conv1d(channels, channels, 4, padding="same")
        self.conv2 = nn.Conv2d(channels, channels, (2, 3), padding="same", dilation=(1, 2))
        self.register_buffer("class_weight", torch.rand(classes) + 0.5)

    def forward(self, x, seq, logits, labels, rows, row_labels, anchor, positive, negative):
        seg = F.nll_loss(torch.log_softmax(logits, dim=1), labels, weight=self.class_weight, ignore_index=1)
        ce = F.cross_entropy(rows, row_labels, weight=self.class_weight, reduction="sum")
        trip = F.triplet_margin_loss(anchor, positive, negative, margin=0.5, swap=True)
        return self.conv1(seq), self.conv2(x), seg, ce, trip


batch, channels, classes = 3, 4, 6


def get_inputs():
    return [torch.randn(batch, channels, 9, 10), torch.randn(batch, channels, 11),
            torch.randn(batch, classes, 5, 7), torch.randint(0, classes, (batch, 5, 7)),
            torch.randn(8, classes), torch.randint(0, classes, (8,)),
            torch.randn(8, 16), torch.randn(8, 16), torch.randn(8, 16)]


def get_init_inputs():
    return [channels, classes]
