"""The child's side of the GPU: the primary context through pycuda, guarded buffers, CUDA-event
timing with an L2 flush, and the machine's ceilings. Imported only inside a runner child."""
from __future__ import annotations

import atexit
import math
import statistics
from typing import Callable

import numpy as np

GUARD_BYTES = 64 << 10      # canary zone before and after every buffer (catches small overruns)
GUARD_BYTE = 0xA5
# Long calls get fewer timed runs: one measurement stays near this many seconds (never fewer
# than MIN_RUNS runs), so a 10 ms GEMM is not run 55 times per candidate.
TIMED_SECONDS = 0.25
MIN_RUNS = 10


def run_counts(estimate_s: float, runs: int, warmup: int) -> tuple[int, int]:
    """(warm-up, timed) runs for a call that took about `estimate_s` seconds once."""
    if estimate_s <= 0:
        return warmup, runs
    fitted = max(MIN_RUNS, math.floor(TIMED_SECONDS / estimate_s))
    return min(warmup, max(1, fitted // 5)), min(runs, fitted)


class DeviceSession:
    def __init__(self, index: int = 0):
        import pycuda.driver as cuda   # the gpu extra; its absence is the child's "no GPU" hello

        cuda.init()
        self.cuda = cuda
        self.index = index
        self.device = cuda.Device(index)
        # The primary context is the one the runtime API inside the candidate's .so also uses.
        self.context = self.device.retain_primary_context()
        self.context.push()
        atexit.register(self.context.pop)   # pycuda aborts at exit if a context is still pushed
        self.l2_bytes = int(self.device.get_attribute(cuda.device_attribute.L2_CACHE_SIZE))
        self._flush: object | None = None

    def describe(self) -> dict:
        major, minor = self.device.compute_capability()
        driver = self.cuda.get_driver_version()
        return {"gpu": self.device.name(), "cc": (major, minor), "arch": f"sm_{major}{minor}",
                "driver": f"{driver // 1000}.{driver % 1000 // 10}", "memory": self.device.total_memory(),
                "l2_bytes": self.l2_bytes}

    def context_usable(self) -> bool:
        """False after a sticky error (illegal address, kernel fault): the context is poisoned."""
        try:
            self.context.synchronize()
            probe = self.cuda.mem_alloc(256)
            self.cuda.memset_d8(probe, 0, 256)
            probe.free()
            return True
        except self.cuda.Error:
            return False

    def allocate(self, nbytes: int, guard_bytes: int = GUARD_BYTES) -> "GuardedBuffer":
        return GuardedBuffer(self.cuda, nbytes, guard_bytes)

    def flush_l2(self) -> None:
        """Overwrite a buffer twice the L2's size so the next run starts from DRAM."""
        size = max(2 * self.l2_bytes, 64 << 20)
        if self._flush is None:
            self._flush = self.cuda.mem_alloc(size)
        self.cuda.memset_d32(self._flush, 0x3F800000, size // 4)

    def _timed(self, run: Callable[[], None]) -> tuple:
        self.flush_l2()
        start, end = self.cuda.Event(), self.cuda.Event()
        start.record()
        run()
        end.record()
        return start, end

    def time_us(self, run: Callable[[], None], *, runs: int = 50, warmup: int = 5) -> list[float]:
        """Per-run times in µs: events around `run` only, L2 flushed before each run. The first
        warm-up run sizes the rest: long runs get fewer repetitions (`run_counts`)."""
        start, end = self._timed(run)
        end.synchronize()
        warmup, runs = run_counts(end.time_since(start) * 1e-3, runs, warmup)
        for _ in range(warmup - 1):
            self._timed(run)
        self.context.synchronize()
        pairs = [self._timed(run) for _ in range(runs)]
        pairs[-1][1].synchronize()
        return [end.time_since(start) * 1000.0 for start, end in pairs]

    def measure_ceilings(self) -> dict:
        """Copy bandwidth (bytes read + written) and library GEMM rates on random data."""
        size = 1 << 30
        src, dst = self.cuda.mem_alloc(size), self.cuda.mem_alloc(size)
        self.cuda.memset_d32(src, 0x3F800000, size // 4)
        copy = self.time_us(lambda: self.cuda.memcpy_dtod(dst, src, size), runs=20)
        src.free()
        dst.free()
        return {"gpu": self.device.name(), "copy_gbps": 2 * size / (statistics.median(copy) * 1e-6) / 1e9,
                "gemm_tflops": _library_gemm_tflops()}


def _library_gemm_tflops(n: int = 4096) -> dict[str, float]:
    """cuBLAS through torch (TF32 off for f32), where torch with CUDA is installed."""
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    torch.backends.cuda.matmul.allow_tf32 = False
    rates: dict[str, float] = {}
    for name, dtype in (("f32", torch.float32), ("f16", torch.float16), ("bf16", torch.bfloat16)):
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        for _ in range(3):
            a @ b
        times = []
        for _ in range(20):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            a @ b
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e-3)
        rates[name] = 2 * n ** 3 / statistics.median(times) / 1e12
        del a, b
    torch.cuda.empty_cache()
    return rates


class GuardedBuffer:
    """`nbytes` of device memory with canary zones on both sides; `ptr` is the usable start.

    Under compute-sanitizer the zones are left out (guard_bytes=0): inside one allocation they
    would hide an overrun from memcheck."""

    def __init__(self, cuda, nbytes: int, guard_bytes: int = GUARD_BYTES):
        self.cuda = cuda
        self.nbytes = nbytes
        self.guard = guard_bytes
        self.base = cuda.mem_alloc(max(1, nbytes + 2 * guard_bytes))
        self.ptr = int(self.base) + guard_bytes
        if guard_bytes:   # the canaries only: the usable bytes are poisoned or written before use
            cuda.memset_d8(self.base, GUARD_BYTE, guard_bytes)
            cuda.memset_d8(self.ptr + nbytes, GUARD_BYTE, guard_bytes)

    def upload(self, data: np.ndarray) -> None:
        assert data.nbytes == self.nbytes
        self.cuda.memcpy_htod(self.ptr, np.ascontiguousarray(data))

    def poison(self, byte: int) -> None:
        if self.nbytes:
            self.cuda.memset_d8(self.ptr, byte, self.nbytes)

    def download(self, dtype: np.dtype) -> np.ndarray:
        out = np.empty(self.nbytes // np.dtype(dtype).itemsize, dtype=dtype)
        self.cuda.memcpy_dtoh(out, self.ptr)
        return out

    def guards_intact(self) -> str | None:
        """None, or where the canaries were overwritten ("after the end", "before the start")."""
        if not self.guard:
            return None
        before = np.empty(self.guard, np.uint8)
        after = np.empty(self.guard, np.uint8)
        self.cuda.memcpy_dtoh(before, int(self.base))
        self.cuda.memcpy_dtoh(after, self.ptr + self.nbytes)
        if (after != GUARD_BYTE).any():
            return f"{int(np.argmax(after != GUARD_BYTE))} bytes past the end"
        if (before != GUARD_BYTE).any():
            return f"{self.guard - int(np.argmax(before != GUARD_BYTE))} bytes before the start"
        return None

    def free(self) -> None:
        self.base.free()
