import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Binary cross entropy (plain and with logits), hinge embedding, soft margin, margin ranking,
    Poisson NLL, pairwise distance, cdist."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y, t):
        p, q = torch.sigmoid(x), torch.sigmoid(y)
        a = F.binary_cross_entropy(p, q) + F.binary_cross_entropy_with_logits(x, q, reduction="sum") * 0.01
        b = F.hinge_embedding_loss(x, t, margin=0.5) + F.soft_margin_loss(x, t)
        b = b + F.margin_ranking_loss(x, y, t, margin=0.1)
        c = F.poisson_nll_loss(x, q) + F.pairwise_distance(x, y).mean() + torch.cdist(x, y).mean()
        return a + b + c


def get_inputs():
    return [torch.randn(8, 12), torch.randn(8, 12), torch.randint(0, 2, (8, 12)).float() * 2 - 1]


def get_init_inputs():
    return []
