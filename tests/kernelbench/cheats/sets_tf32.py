import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


class ModelNew(Model):
    """Correct, but it turns TF32 on for every matmul that runs after it in the same process:
    the next task's PyTorch baseline would lose its fp32 precision (and gain speed)."""

    def forward(self, x):
        torch.backends.cuda.matmul.allow_tf32 = True
        return torch.relu(x)
