"""Where a runner child makes a trial's inputs and reference and checks the output.

`DeviceChecks` (torch present in the child, normally with CUDA): inputs are drawn straight into
the candidate's input buffers, the reference is evaluated and the output compared on the
device; only scalars reach the host, so the traffic per trial does not grow with the problem.
`HostChecks` (no torch with CUDA): numpy draws and the float64 numpy reference on the host,
uploaded and downloaded per trial, the reference kept in a byte-budgeted cache.
Both check every element, the same way (`compare` / `device_compare`).
"""
from __future__ import annotations

import ctypes
import importlib.util
import logging
import os
import time
from collections import OrderedDict
from typing import Any, Callable, Protocol, TypeVar

import numpy as np

from ..ir.graph import Program
from ..ir.reference import to_storage
from .compare import Comparison, Tolerance, compare
from .device import GuardedBuffer
from .references import Trial, TrialCache, program_key

log = logging.getLogger("dice.runner")

# The host cache of trials: at most this, and at most this fraction of the machine's memory.
HOST_CACHE_BYTES = 8 << 30
HOST_CACHE_FRACTION = 1 / 8
# The wide (float64) device reference is used while its values fit in this fraction of the free
# device memory; beyond it the narrow one (float32 values, float64 sums).
WIDE_FRACTION = 0.6
# Reference outputs kept on the device for the next candidates (same seeds, same draws), up to
# this fraction of the device's memory; dropped whenever a candidate's buffers do not fit.
DEVICE_CACHE_FRACTION = 0.2

T = TypeVar("T")


class ChecksOutOfMemory(Exception):
    """The inputs, the reference or the comparison did not fit on the device."""


class Checks(Protocol):
    stages: dict[str, float]    # seconds spent per stage ("inputs", "reference", "check")

    def begin(self, program: Program, bindings: dict[str, int], seed: int, case: int, count: int,
              inputs: dict[str, GuardedBuffer], output: GuardedBuffer) -> None:
        """A new shape: `count` trials will follow, into these buffers."""

    def prepare(self, trial: int) -> None:
        """Write trial `trial`'s inputs into the input buffers (and know its reference)."""

    def changed_input(self, trial: int) -> str | None:
        """The name of an input buffer that no longer holds trial `trial`'s draw, else None."""

    def check(self, trial: int, tolerance: Tolerance) -> Comparison:
        """Compare the output buffer with trial `trial`'s reference."""

    def finish(self) -> None:
        """The candidate is done: give back what was held for it."""

    def release(self) -> None:
        """Give back device memory held for later candidates (a candidate's buffers need it)."""


def _timed(stages: dict[str, float], stage: str, started: float) -> None:
    stages[stage] = stages.get(stage, 0.0) + time.perf_counter() - started


def host_cache_bytes() -> int:
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return HOST_CACHE_BYTES
    return int(min(HOST_CACHE_BYTES, physical * HOST_CACHE_FRACTION))


class HostChecks:
    def __init__(self) -> None:
        self.trials = TrialCache(host_cache_bytes())
        self.stages: dict[str, float] = {}
        self._current: list[Trial] = []

    def begin(self, program: Program, bindings: dict[str, int], seed: int, case: int, count: int,
              inputs: dict[str, GuardedBuffer], output: GuardedBuffer) -> None:
        started = time.perf_counter()
        self.program, self.inputs, self.output = program, inputs, output
        self._current = self.trials.get_many(program, bindings, seed, case, count)
        _timed(self.stages, "reference", started)    # numpy draws and reference, made together

    def prepare(self, trial: int) -> None:
        started = time.perf_counter()
        for name, buf in self.inputs.items():
            buf.upload(to_storage(self._current[trial].inputs[name], self.program.inputs[name].dtype))
        _timed(self.stages, "inputs", started)

    def changed_input(self, trial: int) -> str | None:
        started = time.perf_counter()
        try:
            for name, buf in self.inputs.items():
                drawn = to_storage(self._current[trial].inputs[name], self.program.inputs[name].dtype)
                if not np.array_equal(buf.download(np.uint8), drawn.reshape(-1).view(np.uint8)):
                    return name
            return None
        finally:
            _timed(self.stages, "check", started)

    def check(self, trial: int, tolerance: Tolerance) -> Comparison:
        started = time.perf_counter()
        t = self._current[trial]
        out_dtype = self.program.output.dtype
        raw = self.output.download(to_storage(np.zeros(1), out_dtype).dtype)
        result = compare(raw, t.expected, out_dtype, tolerance, t.tie_values, t.tie_dim)
        _timed(self.stages, "check", started)
        return result

    def finish(self) -> None:
        self._current = []

    def release(self) -> None:
        pass        # the cache is in host memory


class _CudaBytes:
    """Device bytes as the CUDA array interface describes them (torch wraps them, no copy)."""

    def __init__(self, ptr: int, nbytes: int):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 3, "strides": None}


class DeviceChecks:
    def __init__(self, device: Any):
        import torch

        self.torch = torch
        self.device = torch.device(device)
        self.stages: dict[str, float] = {}
        self.expected: Any = None
        self.ties: tuple[Any, int] | None = None
        total = torch.cuda.mem_get_info(self.device)[1] if self.device.type == "cuda" else 1 << 30
        self.cache_budget = int(DEVICE_CACHE_FRACTION * total)
        self._cache: OrderedDict[tuple, tuple[Any, tuple[Any, int] | None]] = OrderedDict()
        self._cached_bytes = 0

    def _bytes(self, buf: GuardedBuffer) -> Any:
        torch = self.torch
        if buf.nbytes == 0:
            return torch.empty(0, dtype=torch.uint8, device=self.device)
        if self.device.type == "cuda":
            return torch.as_tensor(_CudaBytes(buf.ptr, buf.nbytes), device=self.device)
        # CPU torch over host memory: the tests' stand-in for pycuda keeps buffers on the host
        return torch.from_numpy(np.ctypeslib.as_array((ctypes.c_uint8 * buf.nbytes).from_address(buf.ptr)))

    def sees(self, session: Any) -> bool:
        """Whether torch sees the bytes of the session's buffers (wrapped in place, no copy)."""
        probe = session.allocate(256, 0)
        try:
            session.cuda.memset_d8(probe.ptr, 7, 256)
            view = self._bytes(probe)
            if not bool((view == 7).all()):
                return False
            view.fill_(9)          # and what torch writes there is what the kernel will read
            self._sync()
            return bool((probe.download(np.uint8) == 9).all())
        finally:
            probe.free()

    def _sync(self) -> None:
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)

    def begin(self, program: Program, bindings: dict[str, int], seed: int, case: int, count: int,
              inputs: dict[str, GuardedBuffer], output: GuardedBuffer) -> None:
        from .device_reference import torch_dtype
        from .inputs import concrete

        self.program, self.bindings, self.seed, self.case = program, bindings, seed, case
        self.key = (program_key(program), tuple(sorted(bindings.items())), seed, case)
        decls = program.inputs
        self.views = {name: self._bytes(buf).view(torch_dtype(decls[name].dtype))
                      .reshape(concrete(decls[name].shape, bindings)) for name, buf in inputs.items()}
        self.output = self._bytes(output)
        self.wide = self._wide_fits()

    def _wide_fits(self) -> bool:
        from .device_reference import wide_bytes

        if self.device.type != "cuda":
            return True
        torch = self.torch
        free, _ = torch.cuda.mem_get_info(self.device)
        free += torch.cuda.memory_reserved(self.device) - torch.cuda.memory_allocated(self.device)
        return wide_bytes(self.program, self.bindings) <= WIDE_FRACTION * free

    def prepare(self, trial: int) -> None:
        from .device_inputs import draw_into, trial_generator

        started = time.perf_counter()
        self.expected = self.ties = None
        self._fitting(lambda: draw_into(self.views, self.program, self.bindings,
                                        trial_generator(self.device, self.seed, self.case, trial)))
        self._sync()
        _timed(self.stages, "inputs", started)
        started = time.perf_counter()
        key = (*self.key, trial)
        if key in self._cache:
            self._cache.move_to_end(key)
            self.expected, self.ties = self._cache[key]
        else:
            self.expected, self.ties = self._fitting(self._reference)
            self._keep(key)
        self._sync()
        _timed(self.stages, "reference", started)

    def _reference(self) -> tuple[Any, tuple[Any, int] | None]:
        from .device_reference import evaluate

        try:
            expected = evaluate(self.program, self.views, wide=self.wide)
        except self.torch.cuda.OutOfMemoryError:
            self.release()
            self.wide = False
            expected = evaluate(self.program, self.views, wide=False)
        out = self.program.output
        if out.op in ("argmax", "argmin") and len(out.attr("dim")) == 1:
            values = Program(self.program.inputs, "values", out.args[0], self.program.symbols)
            return expected, (evaluate(values, self.views, wide=self.wide), out.attr("dim")[0])
        return expected, None

    @staticmethod
    def _nbytes(entry: tuple[Any, tuple[Any, int] | None]) -> int:
        expected, ties = entry
        return expected.nbytes + (ties[0].nbytes if ties is not None else 0)

    def _keep(self, key: tuple) -> None:
        """Keep this trial's reference if it fits once other problems' references are dropped.
        Never at the expense of this problem's other trials: every candidate asks for trials
        0, 1, 2, ... in turn, which evicting the oldest would turn into no hits at all."""
        entry = (self.expected, self.ties)
        size = self._nbytes(entry)
        for other in [k for k in self._cache if k[:4] != key[:4]]:
            if self._cached_bytes + size <= self.cache_budget:
                break
            self._cached_bytes -= self._nbytes(self._cache.pop(other))
        if self._cached_bytes + size <= self.cache_budget:
            self._cache[key] = entry
            self._cached_bytes += size

    def changed_input(self, trial: int) -> str | None:
        """Draws the trial again beside the buffers (same seeded generator) and compares bytes."""
        from .device_inputs import draw_into, trial_generator

        started = time.perf_counter()
        try:
            def redraw_and_compare() -> str | None:
                again = {name: self.torch.empty_like(view) for name, view in self.views.items()}
                draw_into(again, self.program, self.bindings,
                          trial_generator(self.device, self.seed, self.case, trial))
                return next((name for name, view in self.views.items()
                             if not self.torch.equal(view.view(-1).view(self.torch.uint8),
                                                     again[name].view(-1).view(self.torch.uint8))), None)
            return self._fitting(redraw_and_compare)
        finally:
            _timed(self.stages, "check", started)

    def check(self, trial: int, tolerance: Tolerance) -> Comparison:
        from .device_compare import compare_on_device

        started = time.perf_counter()
        tie_values, tie_dim = self.ties if self.ties is not None else (None, None)
        dtype = self.program.output.dtype
        result = self._fitting(lambda: compare_on_device(self.output, self.expected, dtype, tolerance,
                                                         tie_values, tie_dim))
        _timed(self.stages, "check", started)
        return result

    def finish(self) -> None:
        self.expected = self.ties = None
        self.views, self.output = {}, None
        if self.device.type == "cuda":
            # the next candidate's buffers come from the driver, not from torch's cache
            self.torch.cuda.empty_cache()

    def _fitting(self, work: Callable[[], T]) -> T:
        """`work()`, retried once with the kept references given back if the device ran out of
        memory; ChecksOutOfMemory if it still does not fit."""
        out_of_memory = self.torch.cuda.OutOfMemoryError
        try:
            return work()
        except out_of_memory:
            self.release()
        try:
            return work()
        except out_of_memory as exc:
            raise ChecksOutOfMemory(f"the checks ran out of device memory beside the candidate's buffers "
                                    f"({str(exc).splitlines()[0]})") from None

    def release(self) -> None:
        self._cache.clear()
        self._cached_bytes = 0
        if self.device.type == "cuda":
            self.torch.cuda.empty_cache()


def checks_for(session: Any, where: str | None = None) -> Checks:
    """Device checks when torch with CUDA is importable and sees the session's buffers (`where`
    forces "host" or a torch device such as "cpu"), else host checks."""
    if where == "host":
        return HostChecks()
    if where is not None:
        return DeviceChecks(where)
    if importlib.util.find_spec("torch") is None:
        return HostChecks()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.set_device(session.index)
            checks = DeviceChecks(f"cuda:{session.index}")
            if checks.sees(session):
                return checks
            log.warning("torch does not see the runner's device buffers; checking on the host")
    except Exception as exc:   # a torch whose CUDA cannot start here: the host checks still can
        log.warning("device-side checks unavailable (%s: %s); checking on the host", type(exc).__name__, exc)
    return HostChecks()
