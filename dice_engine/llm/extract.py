"""The code in a model's reply: the fenced block that holds the launcher, else the largest CUDA
block, else the whole reply when it is bare code. Reasoning models' `<think>` sections are
dropped first so that code they sketch while thinking is never taken for the answer."""
from __future__ import annotations

import re

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:```|$)", re.DOTALL)
_CODE_LANGUAGES = {"", "cuda", "cu", "cpp", "c++", "cxx", "c", "cc", "h", "hpp", "cuh"}


class NoCode(ValueError):
    """The reply holds no CUDA code (the message says what it holds instead)."""


def launcher_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf'extern\s+"C"\s+(?:__host__\s+)?void\s+{re.escape(name)}_launch\s*\(')


def extract_code(reply: str, name: str) -> str:
    """The CUDA translation unit of `reply` for the kernel `name` (NoCode when there is none)."""
    text = _THINK.sub("", reply)
    blocks = [body for language, body in _FENCE.findall(text) if language.lower() in _CODE_LANGUAGES]
    blocks = [b.strip() + "\n" for b in blocks if b.strip()]
    launcher = launcher_pattern(name)
    with_launcher = [b for b in blocks if launcher.search(b)]
    if with_launcher:
        return max(with_launcher, key=len)
    cuda_like = [b for b in blocks if "__global__" in b or "extern" in b]
    if cuda_like:
        return max(cuda_like, key=len)
    if "```" not in text and ("__global__" in text or launcher.search(text)):
        return text.strip() + "\n"
    shown = " ".join(text.split())[:80]
    raise NoCode(f"the model's reply holds no CUDA code (it begins: {shown!r})" if shown
                 else "the model's reply is empty")


def missing_launcher(code: str, name: str, signature: str) -> str | None:
    """What is wrong with the launcher, or None when `code` defines it."""
    if launcher_pattern(name).search(code):
        return None
    return f"the code does not define the launcher `{signature}` (with extern \"C\")"
