"""The kernels of finished generations, so that a save can write a stale region at once
(textDocument/willSaveWaitUntil) when its intent was generated before with the same target and
budget (an intent changed and changed back, a file reopened in the same session)."""
from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

Key = tuple[str, str, int]      # intent hash, target arch, budget


class Kernel(NamedTuple):
    body: str
    summary: str


class KernelCache:
    """The latest `capacity` finished kernels, least recently used first out."""

    def __init__(self, capacity: int = 64) -> None:
        self._kernels: OrderedDict[Key, Kernel] = OrderedDict()
        self._capacity = capacity

    def put(self, key: Key, body: str, summary: str) -> None:
        self._kernels[key] = Kernel(body, summary)
        self._kernels.move_to_end(key)
        while len(self._kernels) > self._capacity:
            self._kernels.popitem(last=False)

    def get(self, key: Key) -> Kernel | None:
        kernel = self._kernels.get(key)
        if kernel is not None:
            self._kernels.move_to_end(key)
        return kernel
