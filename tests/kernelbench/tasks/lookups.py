import torch
import torch.nn as nn


class Model(nn.Module):
    """Index lookups: an embedding table read at token ids with a padding mask (~mask, an
    integer count clamped to at least 1), torch.gather along a middle dim, index_select of
    columns at a fixed index buffer."""

    def __init__(self, vocab, width):
        super().__init__()
        self.embedding = nn.Embedding(vocab, width, padding_idx=0)
        self.register_buffer("columns", torch.tensor([5, 0, 3, 3, 7]))

    def forward(self, ids, mask, x, index):
        e = self.embedding(ids).masked_fill(~mask.unsqueeze(-1), 0.0)
        count = mask.sum(dim=1, keepdim=True).clamp(min=1).to(e.dtype)
        pooled = e.sum(dim=1) / count
        picked = torch.gather(x, 1, index)
        return pooled, torch.relu(picked), torch.index_select(x, 2, self.columns)


batch, seq, vocab, width = 4, 9, 50, 16


def get_inputs():
    return [torch.randint(0, vocab, (batch, seq)), torch.rand(batch, seq) > 0.3,
            torch.randn(batch, 12, 8), torch.randint(0, 12, (batch, 5, 8))]


def get_init_inputs():
    return [vocab, width]
