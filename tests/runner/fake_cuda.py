"""A stand-in for `pycuda.driver` backed by host memory (there is no GPU in CI).

Device pointers are host addresses, so a CPU shared library with the launcher ABI can play the
candidate kernel and the runner child's whole verification path runs for real on the CPU.
"""
from __future__ import annotations

import ctypes
import types

import numpy as np

_live: dict[int, ctypes.Array] = {}


class Error(Exception):
    pass


class MemoryError(Error):  # noqa: A001 - pycuda's name
    pass


class _Allocation:
    def __init__(self, size: int):
        if size > 1 << 34:
            raise MemoryError("cuMemAlloc failed: out of memory")
        self.buffer = ctypes.create_string_buffer(size)
        self.address = ctypes.addressof(self.buffer)
        _live[self.address] = self.buffer

    def __int__(self) -> int:
        return self.address

    def free(self) -> None:
        _live.pop(self.address, None)


class _Context:
    def push(self) -> None:
        pass

    def pop(self) -> None:
        pass

    def synchronize(self) -> None:
        pass


class Device:
    def __init__(self, index: int):
        self.index = index

    def name(self) -> str:
        return "Fake CPU device"

    def compute_capability(self) -> tuple[int, int]:
        return (9, 0)

    def total_memory(self) -> int:
        return 1 << 34

    def get_attribute(self, attribute: str) -> int:
        return 1 << 20

    def retain_primary_context(self) -> _Context:
        return _Context()


class Event:
    def record(self, stream: object = None) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def time_since(self, other: "Event") -> float:
        return 0.01


device_attribute = types.SimpleNamespace(L2_CACHE_SIZE="L2_CACHE_SIZE")


def init() -> None:
    pass


def get_driver_version() -> int:
    return 13000


def mem_alloc(size: int) -> _Allocation:
    return _Allocation(size)


def memset_d8(dest: object, byte: int, count: int) -> None:
    ctypes.memset(int(dest), byte, count)


def memset_d32(dest: object, word: int, count: int) -> None:
    np.ctypeslib.as_array((ctypes.c_uint32 * count).from_address(int(dest)))[:] = word


def memcpy_htod(dest: object, src: np.ndarray) -> None:
    ctypes.memmove(int(dest), src.ctypes.data, src.nbytes)


def memcpy_dtoh(dest: np.ndarray, src: object) -> None:
    ctypes.memmove(dest.ctypes.data, int(src), dest.nbytes)


def memcpy_dtod(dest: object, src: object, size: int) -> None:
    ctypes.memmove(int(dest), int(src), size)


def install(monkeypatch) -> None:
    """Make `import pycuda.driver` in this process return this module."""
    import sys

    package = types.ModuleType("pycuda")
    package.driver = sys.modules[__name__]
    monkeypatch.setitem(sys.modules, "pycuda", package)
    monkeypatch.setitem(sys.modules, "pycuda.driver", sys.modules[__name__])
