"""What the scripted model replies in these tests: kernels written by hand for them."""
from __future__ import annotations

from pathlib import Path

KERNELS = Path(__file__).parent / "kernels"
TOPK = "y = torch.topk(x, 4, dim=1).values; x: f32[256, 512]"   # only a model serves it


def kernel_reply(name: str, words: str = "Here is the kernel.") -> dict:
    """A chat reply holding tests/llm/kernels/<name>.cu in a fenced block."""
    return {"content": f"{words}\n\n```cuda\n{(KERNELS / f'{name}.cu').read_text()}```\n"}
