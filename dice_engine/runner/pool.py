"""`GpuRunner`: verifies and times candidate kernels in warm child processes.

Compilation happens in the calling thread (several callers compile in parallel); the GPU work
runs in one child at a time, so timings never overlap. A spare child is started ahead, so that
replacing a child that hung, crashed, wrote garbage or lost its context costs no start-up wait.
The parent never blocks on a child without a deadline and never touches the GPU itself.
"""
from __future__ import annotations

import importlib.util
import logging
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Sequence

from ..arch import ArchSpec
from ..ir.patterns import Problem
from ..sketches.base import RenderedKernel
from . import ceilings as ceiling_cache
from .build import Built, build_library, launcher_symbol
from .doctor import PYCUDA_HINT
from .env import child_environment
from .guards import source_violations
from .inputs import shapes_to_check
from .metrics import Ceilings, rates
from .protocol import BadReply, ChildGone, RunRequest, read_reply, write_message
from .report import RunReport, failed

log = logging.getLogger("dice.runner")
_said_no_gpu = False


class NoGpu(Exception):
    """No child could reach a GPU (no pycuda, no driver, no device)."""


def _say_no_gpu_once(why: str) -> None:
    global _said_no_gpu
    if not _said_no_gpu:
        _said_no_gpu = True
        log.warning("no GPU runner (%s); kernels are ranked by the cost model, unverified", why)


class _Child:
    """One child process and its pipes; every read has a deadline."""

    def __init__(self, command: Sequence[str]):
        env = child_environment()
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env, start_new_session=True)
        self.started = time.monotonic()
        self.hello: dict[str, Any] | None = None
        self.served = 0

    def await_hello(self, timeout: float) -> dict[str, Any]:
        if self.hello is None:
            left = max(0.1, timeout - (time.monotonic() - self.started))
            reply = read_reply(self.proc.stdout.fileno(), left)
            if not isinstance(reply, dict) or "ok" not in reply:
                raise BadReply("the child's first message is not a hello")
            self.hello = reply
        return self.hello

    def request(self, message: Any, kernel_timeout: float, host_timeout: float) -> dict[str, Any]:
        try:
            write_message(self.proc.stdin, message)
        except (BrokenPipeError, OSError) as exc:
            raise ChildGone(f"cannot write to the child ({exc})") from exc
        timeout = host_timeout
        while True:
            reply = read_reply(self.proc.stdout.fileno(), timeout)
            if not isinstance(reply, dict):
                raise BadReply(f"reply of type {type(reply).__name__}")
            event = reply.get("event")
            if event is None:
                if "verdict" not in reply:
                    raise BadReply("reply without a verdict")
                self.served += 1
                return reply
            timeout = kernel_timeout if event == "kernel" else host_timeout

    def stderr_tail(self, limit: int = 1500) -> str:
        self.stderr.seek(0, os.SEEK_END)
        size = self.stderr.tell()
        self.stderr.seek(max(0, size - limit))
        return self.stderr.read().decode(errors="replace").strip()

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            log.error("runner child %d did not exit after SIGKILL", self.proc.pid)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self.stderr.close()


class GpuRunner:
    """Verify and time candidates on one GPU. Thread-safe; use as a context manager or close()."""

    def __init__(self, device: int = 0, *, trials: int = 5, timed_runs: int = 50,
                 kernel_timeout_s: float = 20.0, host_timeout_s: float = 900.0,
                 startup_timeout_s: float = 120.0, spares: int = 1, max_candidates_per_child: int = 256,
                 seed: int | None = None, child_command: Sequence[str] | None = None):
        self.device = device
        self.trials = trials
        self.timed_runs = timed_runs
        self.kernel_timeout_s = kernel_timeout_s
        self.host_timeout_s = host_timeout_s
        self.startup_timeout_s = startup_timeout_s
        self.spares = spares
        self.max_candidates_per_child = max_candidates_per_child
        self.seed = seed if seed is not None else random.SystemRandom().randrange(1 << 31)
        self.command = list(child_command or [sys.executable, "-m", "dice_engine.runner.child",
                                              "--device", str(device)])
        self._custom_child = child_command is not None
        self._lock = threading.RLock()
        self._child: _Child | None = None
        self._spare: _Child | None = None
        self._no_gpu: str | None = None
        self._ceilings: Ceilings | None = None
        self._overheads_ms: list[float] = []
        self._stages_s: dict[str, float] = {}
        self._stages_lock = threading.Lock()
        self._hello: dict[str, Any] | None = None
        self.restarts = 0

    # -- availability ---------------------------------------------------------------------

    def available(self) -> bool:
        """Whether a GPU child answers (said once per process when not)."""
        with self._lock:
            if self._no_gpu is None and self._child is None:
                try:
                    self._current()
                except NoGpu as exc:
                    self._no_gpu = str(exc)
            if self._no_gpu is not None:
                _say_no_gpu_once(self._no_gpu)
            return self._no_gpu is None

    @property
    def gpu(self) -> dict[str, Any]:
        """The child's hello: gpu, arch, cc, driver, memory, l2_bytes ({} without a GPU)."""
        return dict(self._child.hello or {}) if self.available() and self._child else {}

    def _current(self) -> _Child:
        if self._child is None:
            if not self._custom_child and importlib.util.find_spec("pycuda") is None:
                raise NoGpu(f"pycuda is not installed ({PYCUDA_HINT})")
            self._child = self._spare or _Child(self.command)
            self._spare = None
            try:
                hello = self._child.await_hello(self.startup_timeout_s)
            except (TimeoutError, ChildGone, BadReply) as exc:
                tail = self._child.stderr_tail()
                self._discard()
                why = f"the runner child did not start ({type(exc).__name__})"
                raise NoGpu(why + (f": {tail}" if tail else "")) from exc
            if not hello["ok"]:
                self._discard()
                raise NoGpu(hello.get("error", "no GPU"))
            self._hello = dict(hello)
        if self._spare is None and self.spares > 0:
            self._spare = _Child(self.command)
        return self._child

    def _discard(self) -> None:
        if self._child is not None:
            self._child.kill()
            self._child = None

    # -- evaluation -----------------------------------------------------------------------

    def build_arch(self) -> str | None:
        """The arch candidates' libraries are built for (this GPU's), None without a GPU."""
        hello = self._hello     # read without the lock, which a running candidate holds
        if hello is None:
            if not self.available():
                return None
            hello = self.gpu
        return hello.get("arch")

    def prepare(self, rendered: RenderedKernel, arch: ArchSpec | str | None = None) -> Built | None:
        """Build `rendered`'s library for this GPU (thread-safe; the search calls it beside its
        own compile, then hands the result to `evaluate`). None without a GPU."""
        gpu_arch = self.build_arch()
        if gpu_arch is None:
            return None
        target = rendered.compile_arch(gpu_arch)
        kernel = rendered.kernel_names[0].split("::")[-1] if rendered.kernel_names else "kernel"
        started = time.monotonic()
        built = build_library(rendered.source, target, filename=f"{kernel}.cu")
        self._add_stages({"build": time.monotonic() - started})
        return built

    def evaluate(self, rendered: RenderedKernel, problem: Problem, arch: ArchSpec | str | None = None, *,
                 trials: int | None = None, time: bool = True, built: Built | None = None) -> RunReport:
        """Compile `rendered` (unless `built` by `prepare`), verify it against the reference at the
        intent's shapes (and an odd shape when the intent has symbols) over fresh random inputs,
        and time it.

        The library is built for the GPU that runs it; `arch` names the generation target only."""
        if not self.available():
            return failed("no-gpu", self._no_gpu or "no GPU")
        if gamed := source_violations(rendered.source, problem.program):
            return failed("guard", "refused: the code " + "; it ".join(gamed))
        built = built or self.prepare(rendered, arch)
        if built is None:
            return failed("no-gpu", self._no_gpu or "no GPU")
        if built.library is None:
            return failed("compile-error", built.error)
        return self.run_library(str(built.library), launcher_symbol(rendered), rendered, problem,
                                trials=trials, time=time)

    def run_library(self, library: str, symbol: str, rendered: RenderedKernel, problem: Problem, *,
                    trials: int | None = None, time: bool = True,
                    shapes: list[dict[str, int]] | None = None) -> RunReport:
        """Run an already built library (the launcher `symbol`, parameters as `rendered.params`)."""
        request = RunRequest(library=library, symbol=symbol, roles=[p.role for p in rendered.params],
                             names=[p.name for p in rendered.params], problem=problem,
                             shapes=shapes if shapes is not None else shapes_to_check(problem.program),
                             trials=trials or self.trials, seed=self.seed, time=time, runs=self.timed_runs)
        with self._lock:
            if not self.available():
                return failed("no-gpu", self._no_gpu or "no GPU")
            reply, wall = self._exchange(request)
            if reply["verdict"] == "no-gpu":
                return failed("no-gpu", reply["detail"])
            report = RunReport(verified=reply["verdict"] == "ok", verdict=reply["verdict"],
                               detail=reply.get("detail", ""), max_rel_err=reply.get("max_rel_err"),
                               time_us=reply.get("time_us"), reference_time_us=reply.get("reference_time_us"),
                               shapes=request.shapes)
            if "busy_s" in reply:
                report.overhead_ms = max(0.0, (wall - reply["busy_s"]) * 1e3)
                self._overheads_ms.append(report.overhead_ms)
                self._add_stages({"transfer": report.overhead_ms * 1e-3})
            self._add_stages(reply.get("stages", {}))
            if report.time_us:
                measured = rates(problem, request.shapes[0], report.time_us, self.ceilings())
                report.gbps, report.tflops = measured.gbps, measured.tflops
                report.roofline_fraction = measured.roofline_fraction
            return report

    def _exchange(self, message: Any) -> tuple[dict[str, Any], float]:
        """Send one request to the current child; any failure of the child becomes a verdict
        and the child is replaced."""
        try:
            child = self._current()
        except NoGpu as exc:
            return {"verdict": "no-gpu", "detail": str(exc)}, 0.0
        started = time.monotonic()
        try:
            reply = child.request(message, self.kernel_timeout_s, self.host_timeout_s)
        except TimeoutError:
            self._replace()
            return {"verdict": "timeout", "detail": f"no answer within {self.kernel_timeout_s:g} s while a "
                                                    "kernel was running; the child was killed"}, 0.0
        except (ChildGone, BadReply) as exc:
            code = _exit_status(child, wait_s=2.0 if isinstance(exc, ChildGone) else 0.0)
            tail = child.stderr_tail()
            self._replace()
            how = f"exited with status {code}" if code is not None else str(exc)
            return {"verdict": "crash", "detail": f"the runner child {how}{': ' + tail if tail else ''}"}, 0.0
        wall = time.monotonic() - started
        if reply.get("context_lost") or child.served >= self.max_candidates_per_child:
            self._replace()
        return reply, wall

    def _replace(self) -> None:
        self.restarts += 1
        self._discard()

    def ping(self) -> float | None:
        """Round-trip time of an empty request in ms (the pool's per-candidate floor)."""
        with self._lock:
            if not self.available():
                return None
            started = time.monotonic()
            reply, _ = self._exchange("ping")
            return (time.monotonic() - started) * 1e3 if reply["verdict"] == "ok" else None

    # -- machine figures ------------------------------------------------------------------

    def ceilings(self) -> Ceilings | None:
        """Copy bandwidth and library GEMM rates of this machine (measured once, cached on disk)."""
        with self._lock:
            if self._ceilings is None and self.available():
                gpu, driver = self.gpu.get("gpu", "gpu"), self.gpu.get("driver", "")
                self._ceilings = ceiling_cache.load(gpu, driver)
                if self._ceilings is None:
                    reply, _ = self._exchange("ceilings")
                    if reply["verdict"] == "ok":
                        data = reply["ceilings"]
                        self._ceilings = Ceilings(data["gpu"], data["copy_gbps"], data["gemm_tflops"])
                        ceiling_cache.store(self._ceilings, driver)
            return self._ceilings

    def _add_stages(self, stages: dict[str, float]) -> None:
        with self._stages_lock:
            for stage, seconds in stages.items():
                self._stages_s[stage] = self._stages_s.get(stage, 0.0) + seconds

    def stats(self) -> dict[str, Any]:
        """Candidates run, child restarts, the median parent-side overhead per candidate, and
        seconds per stage so far: build (nvcc for the runner's library), transfer (request and
        reply), and the child's inputs, reference, launch, check, runs, reference runs."""
        overheads = sorted(self._overheads_ms)
        return {"candidates": len(overheads), "restarts": self.restarts,
                "median_overhead_ms": overheads[len(overheads) // 2] if overheads else None,
                "stages_s": dict(self._stages_s)}

    # -- lifetime -------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            for child in (self._child, self._spare):
                if child is not None:
                    child.kill()
            self._child = self._spare = None

    def __enter__(self) -> "GpuRunner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def _exit_status(child: _Child, wait_s: float) -> int | None:
    """The child's exit status; a closed pipe comes a moment before the process can be reaped."""
    try:
        return child.proc.wait(timeout=wait_s) if wait_s else child.proc.poll()
    except subprocess.TimeoutExpired:
        return None


def _arch_name(arch: ArchSpec | str | None) -> str:
    if isinstance(arch, ArchSpec):
        return arch.name
    return arch or "sm_90"
