"""Triplet margin loss (margin=0.7, p=2, mean reduction) over anchor/positive/negative batches of shape
(513, 767)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=2.0)


batch_size = 513
dim = 767
margin = 0.7


def get_inputs():
    anchor = torch.randn(batch_size, dim)
    positive = anchor + 0.5 * torch.randn(batch_size, dim)
    negative = torch.randn(batch_size, dim)
    return [anchor, positive, negative]


def get_init_inputs():
    return [margin]
