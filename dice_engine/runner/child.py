"""A runner child: owns the GPU context, runs candidates sent by the parent, replies.

Run as `python -m dice_engine.runner.child` (the warm pool: framed requests on stdin, replies on
the original stdout, which is moved away from fd 1 first so that kernel printf and library chatter
go to stderr), or with `--once REQUEST --reply FILE` for one run under compute-sanitizer or ncu.
While a kernel may be running the child announces {"event": "kernel"} and afterwards
{"event": "host"}, so the parent applies its short kernel timeout only where a hang can happen.
After a sticky device error the child replies with context_lost and exits: a poisoned context
never serves another candidate.
"""
from __future__ import annotations

import argparse
import ctypes
import math
import os
import pickle
import statistics
import sys
import time
import traceback
from typing import Any, Callable

from .checks import Checks, ChecksOutOfMemory, checks_for
from .compare import POISON_BYTE, tolerance_for
from .device import GUARD_BYTES, DeviceSession, GuardedBuffer
from ..ir.graph import Program
from .inputs import concrete
from .protocol import ChildGone, RunRequest, read_message, write_message
from .guards import timer_disagrees
from .torch_reference import ReferenceTimer

# cudaError_t values after which the context is unusable (illegal address, assert, hardware
# stack error, illegal instruction, misaligned address, invalid address space, invalid PC,
# launch failure, launch timeout).
STICKY_ERRORS = {700, 702, 710, 714, 715, 716, 717, 718, 719}
OUT_OF_MEMORY = 2


class DeviceError(Exception):
    def __init__(self, verdict: str, detail: str):
        super().__init__(detail)
        self.verdict = verdict
        self.detail = detail


class Launcher:
    """The candidate's extern "C" launcher and the error shim compiled beside it."""

    def __init__(self, library: str, symbol: str, roles: list[str]):
        self.lib = ctypes.CDLL(library)
        self.fn = getattr(self.lib, symbol)
        self.fn.restype = None
        arg_types = [ctypes.c_longlong if r == "symbol" else ctypes.c_void_p for r in roles]
        self.fn.argtypes = arg_types + [ctypes.c_void_p]
        self.last_error: Callable[[], int] = self.lib.dice_runner_last_error
        self.synchronize: Callable[[], int] = self.lib.dice_runner_synchronize
        self.lib.dice_runner_error_string.restype = ctypes.c_char_p

    def describe(self, code: int) -> str:
        return f"CUDA error {code}: {self.lib.dice_runner_error_string(code).decode(errors='replace')}"

    def check(self, code: int, when: str) -> None:
        if code == 0:
            return
        if code in STICKY_ERRORS:
            raise DeviceError("fault", f"{self.describe(code)} ({when})")
        if code == OUT_OF_MEMORY:
            raise DeviceError("out-of-memory", f"{self.describe(code)} ({when})")
        raise DeviceError("launch-failure", f"{self.describe(code)} ({when})")


class Child:
    def __init__(self, session: DeviceSession, notify: Callable[[str], None], checks: Checks | None = None):
        self.session = session
        self.notify = notify
        # DICE_RUNNER_CHECKS=host forces the numpy checks, =<torch device> the device checks
        self.checks = checks or checks_for(session, os.environ.get("DICE_RUNNER_CHECKS") or None)
        self.reference = ReferenceTimer(session.l2_bytes)

    def handle(self, request: Any) -> dict:
        if request == "ping":
            return {"verdict": "ok"}
        if request == "ceilings":
            return {"verdict": "ok", "ceilings": self.session.measure_ceilings()}
        return self.run(request)

    def run(self, req: RunRequest) -> dict:
        buffers: list[GuardedBuffer] = []
        try:
            launcher = Launcher(req.library, req.symbol, req.roles)
            return self._verify_and_time(req, launcher, buffers)
        except DeviceError as exc:
            return {"verdict": exc.verdict, "detail": exc.detail}
        except ChecksOutOfMemory as exc:
            return {"verdict": "out-of-memory", "detail": str(exc)}
        except self.session.cuda.MemoryError as exc:
            return {"verdict": "out-of-memory", "detail": f"allocating the buffers failed: {exc}"}
        except self.session.cuda.Error as exc:
            return {"verdict": "fault", "detail": f"CUDA driver error: {exc}"}
        finally:
            for b in buffers:
                try:
                    b.free()
                except self.session.cuda.Error:
                    pass

    def _verify_and_time(self, req: RunRequest, launcher: Launcher, buffers: list[GuardedBuffer]) -> dict:
        program = req.problem.program
        tolerance = tolerance_for(req.problem)
        guard = GUARD_BYTES if req.guards else 0
        worst = 0.0
        time_us = reference_us = None
        checks = self.checks
        try:
            for case, bindings in enumerate(req.shapes):
                for b in buffers:
                    b.free()
                buffers.clear()
                named, output = self._allocate(program, bindings, guard, buffers)
                args = self._arguments(req, named, output, bindings)
                where = f"at {bindings}" if bindings else "at the intent's shapes"
                # When timing, one trial more than verified: it is checked after the timed runs
                # (a kernel that is right only while it is being checked is caught; guards.py).
                timed = req.time and case == 0
                checks.begin(program, bindings, req.seed, case, req.trials + timed, named, output)
                for trial in range(req.trials):
                    failure, error = self._trial(launcher, args, named, output, program.output_name, trial,
                                                 tolerance, f"trial {trial + 1} {where}",
                                                 check_inputs=trial == 0)
                    if failure is not None:
                        return failure
                    worst = max(worst, error)
                if timed:
                    started = time.perf_counter()
                    time_us = self._time(launcher, args, req.runs)
                    self._stage("runs", started)
                    failure, _ = self._trial(launcher, args, named, output, program.output_name, req.trials,
                                             tolerance,
                                             f"after the timed runs {where}", check_inputs=True)
                    if failure is not None:
                        failure["verdict"] = "guard"
                        failure["detail"] = ("correct while verified, wrong after the timed runs: "
                                             + failure["detail"])
                        return failure
                    if req.reference:
                        started = time.perf_counter()
                        reference_us = self.reference.time_us(program, bindings, runs=req.runs, seed=req.seed)
                        self._stage("reference runs", started)
        finally:
            checks.finish()
        return {"verdict": "ok", "max_rel_err": worst, "time_us": time_us, "reference_time_us": reference_us,
                "detail": f"verified {req.trials} trials at {len(req.shapes)} shape(s)"}

    def _allocate(self, program: Program, bindings: dict[str, int], guard: int,
                  buffers: list[GuardedBuffer]) -> tuple[dict[str, GuardedBuffer], GuardedBuffer]:
        """The candidate's input and output buffers (listed in `buffers` for freeing); what the
        checks keep for later candidates is given back first if they do not fit."""
        sizes = {name: decl.dtype.size * math.prod(concrete(decl.shape, bindings))
                 for name, decl in program.inputs.items()}
        out_size = program.output.dtype.size * math.prod(concrete(program.output.shape, bindings))
        try:
            return self._allocate_once(sizes, out_size, guard, buffers)
        except self.session.cuda.MemoryError:
            for b in buffers:
                b.free()
            buffers.clear()
            self.checks.release()
        return self._allocate_once(sizes, out_size, guard, buffers)

    def _allocate_once(self, sizes: dict[str, int], out_size: int, guard: int,
                       buffers: list[GuardedBuffer]) -> tuple[dict[str, GuardedBuffer], GuardedBuffer]:
        named = {}
        for name, size in sizes.items():
            named[name] = self.session.allocate(size, guard)
            buffers.append(named[name])
        output = self.session.allocate(out_size, guard)
        buffers.append(output)
        return named, output

    def _stage(self, stage: str, started: float) -> None:
        self.checks.stages[stage] = self.checks.stages.get(stage, 0.0) + time.perf_counter() - started

    def take_stages(self) -> dict[str, float]:
        """Seconds per stage since the last call (inputs, reference, launch, check, runs, ...)."""
        stages, self.checks.stages = self.checks.stages, {}
        return stages

    def _trial(self, launcher: Launcher, args: list[int], named: dict[str, GuardedBuffer],
               output: GuardedBuffer, output_name: str, trial: int, tolerance: Any, when: str,
               check_inputs: bool) -> tuple[dict | None, float]:
        """Draw one trial's inputs, run, check bounds, the output and (on the first trial and after
        the timed runs, to spare work on large inputs) that the inputs are unchanged: (a verdict on
        failure, the trial's error)."""
        checks = self.checks
        checks.prepare(trial)
        output.poison(POISON_BYTE)
        started = time.perf_counter()
        self._launch(launcher, args, when)
        self._stage("launch", started)
        for name, buf in [*named.items(), (output_name, output)]:
            if (damage := buf.guards_intact()) is not None:
                detail = f"wrote out of bounds of '{name}' ({damage}), {when}"
                return {"verdict": "out-of-bounds", "detail": detail}, 0.0
        if check_inputs and (changed := checks.changed_input(trial)) is not None:
            return {"verdict": "guard", "detail": f"wrote into the input '{changed}', {when}"}, 0.0
        result = checks.check(trial, tolerance)
        if result.verdict != "ok":
            return {"verdict": result.verdict, "max_rel_err": result.max_rel_err,
                    "detail": f"{result.detail}; {when}"}, 0.0
        return None, result.max_rel_err or 0.0

    @staticmethod
    def _arguments(req: RunRequest, named: dict[str, GuardedBuffer], output: GuardedBuffer,
                   bindings: dict[str, int]) -> list[int]:
        args = []
        for role, name in zip(req.roles, req.names):
            if role == "input":
                args.append(named[name].ptr)
            elif role == "output":
                args.append(output.ptr)
            else:
                args.append(bindings[name])
        return args + [0]     # the legacy default stream, the one pycuda's events record on

    def _launch(self, launcher: Launcher, args: list[int], when: str) -> None:
        self.notify("kernel")
        launcher.fn(*args)
        launcher.check(launcher.last_error(), f"at launch, {when}")
        launcher.check(launcher.synchronize(), f"while running, {when}")
        self.notify("host")

    def _time(self, launcher: Launcher, args: list[int], runs: int) -> float:
        self.notify("kernel")
        times = self.session.time_us(lambda: launcher.fn(*args), runs=runs)
        launcher.check(launcher.last_error(), "while timing")
        launcher.check(launcher.synchronize(), "while timing")
        started = time.perf_counter()        # the same calls by the wall clock (a patched timer)
        for _ in range(runs):
            launcher.fn(*args)
        launcher.check(launcher.synchronize(), "while timing")
        wall_us = (time.perf_counter() - started) * 1e6 / runs
        self.notify("host")
        median = statistics.median(times)
        if (why := timer_disagrees(median, wall_us)) is not None:
            raise DeviceError("guard", why)
        return median


def serve(device: int) -> int:
    reply_fd = os.dup(1)
    os.dup2(2, 1)
    replies = os.fdopen(reply_fd, "wb")
    requests = sys.stdin.buffer
    try:
        session = DeviceSession(device)
    except Exception as exc:   # no pycuda, no driver, no device: all mean "no GPU here"
        write_message(replies, {"ok": False, "error": f"{type(exc).__name__}: {exc}"})
        return 0
    # Made before the hello, so that start-up (torch's import for the device checks included) is
    # over when the parent sees the child as ready.
    child = Child(session, lambda event: write_message(replies, {"event": event}))
    write_message(replies, {"ok": True, **session.describe()})
    while True:
        try:
            request = read_message(requests)
        except ChildGone:
            return 0
        started = time.perf_counter()
        reply = _handle_safely(child, request)
        reply["busy_s"] = time.perf_counter() - started
        write_message(replies, reply)
        if reply.get("context_lost"):
            return 0


def _handle_safely(child: Child, request: Any) -> dict:
    try:
        reply = child.handle(request)
        reply["stages"] = child.take_stages()
    except Exception:
        reply = {"verdict": "crash", "detail": "runner child error:\n" + traceback.format_exc(limit=6)}
    harmless = ("ok", "mismatch", "unwritten", "compile-error", "guard")
    if reply["verdict"] not in harmless and not child.session.context_usable():
        reply["context_lost"] = True
    return reply


def run_once(device: int, request_path: str, reply_path: str) -> int:
    """One request from a file, for compute-sanitizer and ncu (they wrap a whole process)."""
    with open(request_path, "rb") as f:
        request = pickle.load(f)
    # Host checks: under compute-sanitizer and ncu only the candidate's kernels should run
    # (torch's draws, reference and comparison would be checked and profiled too).
    child = Child(DeviceSession(device), lambda event: None, checks_for(None, "host"))
    reply = _handle_safely(child, request)
    with open(reply_path, "wb") as f:
        pickle.dump(reply, f)
    return 0 if reply["verdict"] == "ok" else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dice_engine.runner.child")
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--once", metavar="REQUEST")
    parser.add_argument("--reply", metavar="FILE")
    args = parser.parse_args(argv)
    if args.once:
        return run_once(args.device, args.once, args.reply)
    return serve(args.device)


if __name__ == "__main__":
    sys.exit(main())
