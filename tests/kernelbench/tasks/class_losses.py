import torch
import torch.nn as nn


class Model(nn.Module):
    """cross_entropy with the default and the sum reduction, and nll_loss on log_softmax with an
    ignore_index that some targets hit (those rows add nothing and 'mean' does not count them)."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        ce = torch.nn.functional.cross_entropy(predictions, targets)
        ce_sum = torch.nn.functional.cross_entropy(predictions, targets, reduction="sum")
        logp = torch.log_softmax(predictions, dim=1)
        nll = torch.nn.functional.nll_loss(logp, targets, ignore_index=2)
        return ce, ce_sum, nll


batch, classes = 16, 5


def get_inputs():
    return [torch.randn(batch, classes), torch.randint(0, classes, (batch,))]


def get_init_inputs():
    return []
