import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """cosine_similarity and cosine_embedding_loss."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y, target):
        return F.cosine_similarity(x, y, dim=1).mean() + F.cosine_embedding_loss(x, y, target, margin=0.2)


def get_inputs():
    return [torch.randn(8, 16), torch.randn(8, 16), torch.randint(0, 2, (8,)).float() * 2 - 1]


def get_init_inputs():
    return []
