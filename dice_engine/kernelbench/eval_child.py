"""The evaluation itself, in a child process that owns the GPU (`evaluate.py` starts it).

    python -m dice_engine.kernelbench.eval_child JOBS_JSON CONFIG_JSON RESULTS_JSONL

JOBS_JSON names a list of [TASK.py, NEW.py] pairs, evaluated in order; one JSON line per pair
is appended to RESULTS_JSONL as soon as it is done. One process serves many pairs (starting
Python, torch and CUDA costs seconds a task), but only while nothing could carry over: the
child exits after a pair whose run raised (a fault may have broken the CUDA context), after
any torch or timer callable was replaced, or after a global numeric flag (TF32, matmul
precision, cuDNN autotuning) changed. The parent starts a fresh one for the pairs left.

KernelBench's protocol: both models built from the same seed; correctness on freshly seeded
inputs (tolerance 1e-4 for fp32 results, 1e-2 for fp16/bf16); then timing with CUDA events,
a warm-up first and the L2 cache flushed before every trial, PyTorch eager (and torch.compile
when asked) timed in the same process. The guards of `guards.py` run on every correctness call,
and three extra calls check for stream, result-cache and pointer-cache tricks. Functions used
here are bound before the solution is loaded, so a patched torch cannot fool the measurement.

Beside KernelBench's check against PyTorch's own fp32 result, `float64_check` measures both the
solution and PyTorch against a float64 truth (the task's Model in double on double inputs): an
fp32 reference is itself inexact on long accumulations, so a solution may be as accurate as
PyTorch and still differ from it. That figure is reported, never used to pass a solution.
"""

from __future__ import annotations

import copy
import gc
import json
import os
import sys
import time
import types
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import torch

from .guards import PatchGuard, aliased_output, dtype_mismatch, mutated_inputs

_allclose, _equal, _Event, _synchronize = (
    torch.allclose,
    torch.equal,
    torch.cuda.Event,
    torch.cuda.synchronize,
)
_elapsed = torch.cuda.Event.elapsed_time
WARMUP = 3
SEED = 42
CHUNK = 1 << 26  # elements compared at a time
STREAM_DELAY_CYCLES = 200_000_000  # ~0.1 s of GPU clock before the delayed inputs are written


class Rejected(Exception):
    """The solution broke the protocol; the message says how."""


def load_module(path: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = path
    exec(compile(Path(path).read_text(encoding="utf-8"), path, "exec"), module.__dict__)
    return module


def _tolerance(t: torch.Tensor) -> float:
    return 1e-2 if t.dtype in (torch.float16, torch.bfloat16) else 1e-4


def _as_list(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def task_inputs(task: types.ModuleType, seed: int) -> list[Any]:
    """The task's inputs, drawn on the GPU (as many seconds faster as a 6 GB input has
    gigabytes); a get_inputs that cannot run there draws them on the host instead."""
    torch.manual_seed(seed)
    try:
        with torch.device("cuda"):
            made = task.get_inputs()
    except (RuntimeError, TypeError):
        torch.manual_seed(seed)
        made = task.get_inputs()
    return [x.cuda() if isinstance(x, torch.Tensor) else x for x in made]


def _chunks(*tensors: torch.Tensor) -> Iterator[tuple[torch.Tensor, ...]]:
    """Matching slices of the flattened tensors, so that float64 copies of a tensor of 10^9
    elements never coexist in GPU memory (KernelBench level 1 has 6 GB inputs)."""
    flat = [t.reshape(-1) for t in tensors]
    for start in range(0, flat[0].numel(), CHUNK):
        yield tuple(f[start : start + CHUNK] for f in flat)


def _compare(ref: list[Any], out: list[Any]) -> tuple[bool, float]:
    worst = 0.0
    ok = True
    for r, o in zip(ref, out):
        if not isinstance(r, torch.Tensor):
            ok = ok and r == o
            continue
        if o.shape != r.shape:
            return False, float("inf")
        tol = _tolerance(r)
        for rc, oc in _chunks(r, o):
            worst = max(worst, float((oc.float() - rc.float()).abs().max()))
            same_nans = not (oc.isnan() != rc.isnan()).any()
            ok = ok and same_nans and _allclose(oc.double(), rc.double(), atol=tol, rtol=tol, equal_nan=True)
    return ok, worst


class Evaluation:
    def __init__(self, task_path: str, new_path: str, config: dict[str, Any]):
        self.config = config
        self.patches = PatchGuard()
        self.task = load_module(task_path, "kernelbench_task")
        self.new = load_module(new_path, "kernelbench_new")
        if why := self.patches.patched():
            raise Rejected(f"loading the solution: {why}")
        if "ModelNew" not in self.new.__dict__:
            raise Rejected(f"{new_path} defines no ModelNew")
        init = self.task.get_init_inputs()
        torch.manual_seed(SEED)
        self.ref = self.task.Model(*init).cuda()
        torch.manual_seed(SEED)
        self.model = self.new.ModelNew(*init).cuda()
        ref_state, new_state = self.ref.state_dict(), self.model.state_dict()
        self.weights_equal = ref_state.keys() == new_state.keys() and all(
            _equal(ref_state[k], new_state[k]) for k in ref_state
        )

    def call_new(self, inputs: list[Any]) -> list[Any]:
        """ModelNew on `inputs`, with the input, alias and dtype guards."""
        before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        out = _as_list(self.model(*inputs))
        _synchronize()
        owned = [*inputs, *self.model.parameters(), *self.model.buffers()]
        for why in (mutated_inputs(before, inputs), aliased_output(out, owned), self.patches.patched()):
            if why:
                raise Rejected(why)
        return out

    def check(self, inputs: list[Any], what: str) -> float:
        with torch.no_grad():
            ref = _as_list(self.ref(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]))
            out = self.call_new(inputs)
        if why := dtype_mismatch(ref, out):
            raise Rejected(f"{what}: {why}")
        ok, worst = _compare(ref, out)
        if not ok:
            raise Rejected(f"{what}: wrong result (max abs difference {worst:.3g})")
        return worst

    def correctness(self) -> float:
        worst = 0.0
        for trial in range(self.config["correctness_trials"]):
            worst = max(worst, self.check(task_inputs(self.task, SEED + trial),
                                          f"correctness trial {trial + 1}"))
        # The same tensors holding new values: a result cached by input pointer shows.
        inputs = task_inputs(self.task, SEED)
        with torch.no_grad():
            self.model(*inputs)
        fresh = task_inputs(self.task, SEED + 1000)
        for x, y in zip(inputs, fresh):
            if isinstance(x, torch.Tensor):
                x.copy_(y)
        worst = max(worst, self.check(inputs, "same input tensors, new values"))
        return max(worst, self.stream_check())

    def stream_check(self) -> float:
        """The inputs are written on the current stream only after a delay: work launched on
        any other stream reads them before they are there."""
        inputs = task_inputs(self.task, SEED + 2000)
        staged = [
            torch.full_like(x, float("nan"))
            if isinstance(x, torch.Tensor) and x.is_floating_point()
            else (torch.zeros_like(x) if isinstance(x, torch.Tensor) else x)
            for x in inputs
        ]
        stream = torch.cuda.Stream()
        _synchronize()
        with torch.no_grad(), torch.cuda.stream(stream):
            torch.cuda._sleep(STREAM_DELAY_CYCLES)
            for s, x in zip(staged, inputs):
                if isinstance(s, torch.Tensor):
                    s.copy_(x)
            out = [o.clone() if isinstance(o, torch.Tensor) else o for o in _as_list(self.model(*staged))]
        _synchronize()
        with torch.no_grad():
            ref = _as_list(self.ref(*inputs))
        ok, worst = _compare(ref, out)
        if not ok:
            raise Rejected(
                "with a non-default current stream the result is wrong: "
                "the solution does not run on the current CUDA stream"
            )
        return worst

    def float64_check(self) -> dict[str, Any]:
        """Scaled errors max|o - t| / (1 + |t|) of the solution and of PyTorch against a float64
        truth on fresh inputs; `ok` when the solution's is within the dtype tolerance or twice
        PyTorch's own, whichever is larger."""
        inputs = task_inputs(self.task, SEED + 3000)
        with torch.no_grad():
            ref = _as_list(self.ref(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]))
            out = self.call_new(inputs)
            truth_model = copy.deepcopy(self.ref).double()
            wide = [
                x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs
            ]
            truth = _as_list(truth_model(*wide))
        del truth_model, wide
        err_new = err_torch = 0.0
        tol = 0.0
        for t, r, o in zip(truth, ref, out):
            if not (isinstance(t, torch.Tensor) and t.is_floating_point()):
                continue
            for tc, rc, oc in _chunks(t, r, o):
                scale = 1.0 + tc.abs()
                err_new = max(err_new, float(((oc.double() - tc).abs() / scale).max()))
                err_torch = max(err_torch, float(((rc.double() - tc).abs() / scale).max()))
            tol = max(tol, _tolerance(r))
        return {"err_new": err_new, "err_torch": err_torch, "ok": err_new <= max(tol, 2 * err_torch)}

    def timing(self, models: dict[str, Any], trials: int) -> dict[str, dict[str, float]]:
        """CUDA-event times of each model on the same inputs, the L2 flushed before every call.
        The models take turns within each trial (in alternating order), so that drift over the
        run (clocks, the allocator settling after the float64 check) falls on all of them alike."""
        inputs = task_inputs(self.task, SEED)
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 64 << 20)
        flush = torch.empty(max(2 * l2, 1 << 20) // 4, dtype=torch.float32, device="cuda")
        times: dict[str, list[float]] = {name: [] for name in models}
        names = list(models)
        with torch.no_grad():
            for model in models.values():
                for _ in range(WARMUP):
                    model(*inputs)
            _synchronize()
            for trial in range(trials):
                for name in names if trial % 2 == 0 else reversed(names):
                    flush.zero_()
                    start, end = _Event(enable_timing=True), _Event(enable_timing=True)
                    start.record()
                    models[name](*inputs)
                    end.record()
                    _synchronize()
                    times[name].append(_elapsed(start, end))
        return {name: _stats(t) for name, t in times.items()}


def _stats(times: list[float]) -> dict[str, float]:
    times = sorted(times)
    mean = sum(times) / len(times)
    std = (sum((t - mean) ** 2 for t in times) / len(times)) ** 0.5
    return {
        "mean_ms": mean,
        "std_ms": std,
        "min_ms": times[0],
        "max_ms": times[-1],
        "median_ms": times[len(times) // 2],
        "trials": len(times),
    }


def run(task_path: str, new_path: str, config: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "task": task_path,
        "new": new_path,
        "correct": False,
        "message": "",
        "device": torch.cuda.get_device_name(0),
        "process": os.getpid(),  # which evaluation process served it
    }
    try:
        ev = Evaluation(task_path, new_path, config)
        result["weights_equal"] = ev.weights_equal
        result["max_abs_diff"] = ev.correctness()
        result["correct"] = True
    except Rejected as e:
        result["message"] = str(e)
        return result
    if config.get("float64", True):
        torch.cuda.empty_cache()
        try:
            result["float64"] = ev.float64_check()
        except (RuntimeError, TypeError) as e:  # an operator without a double kernel, or out of memory
            result["float64"] = {"unavailable": " ".join(str(e).split())[:200]}
        torch.cuda.empty_cache()
    models = {"new": ev.model, "eager": ev.ref}
    if config.get("compile"):
        models["compile"] = torch.compile(ev.ref)
    for name, stats in ev.timing(models, config["trials"]).items():
        result[f"time_{name}"] = stats
    result["speedup_eager"] = result["time_eager"]["mean_ms"] / result["time_new"]["mean_ms"]
    if config.get("compile"):
        result["speedup_compile"] = result["time_compile"]["mean_ms"] / result["time_new"]["mean_ms"]
    if why := ev.patches.patched():  # patched while being timed: nothing counts
        result.update(correct=False, message=f"while timing: {why}")
    result["fast_1"] = result["correct"] and result["speedup_eager"] > 1.0
    return result


def load_compiler() -> None:
    """Import Dynamo before the patch guard's snapshot: on import it wraps torch.manual_seed,
    which the guard would otherwise report as the solution's patch once torch.compile runs."""
    import torch._dynamo  # noqa: F401


def process_state(config: dict[str, Any]) -> tuple[PatchGuard, tuple[Any, ...]]:
    """What a reused evaluation process must still have after each pair: its callables (Dynamo
    loaded first where torch.compile will run, else every pair would read as a patch and cost a
    fresh process) and its numeric flags."""
    if config.get("compile"):
        load_compiler()
    return PatchGuard(), _numeric_flags()


def exact_fp32() -> None:
    """PyTorch's baselines compute in the task's own precision: cuDNN's convolutions default to
    TF32 on Ampere and later, which rounds fp32 operands to 10 mantissa bits (an fp32 reference
    0.5e-3 away from the truth, and a faster baseline than fp32)."""
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def _numeric_flags() -> tuple[Any, ...]:
    return (
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
        torch.backends.cudnn.benchmark,
        torch.get_float32_matmul_precision(),
    )


def _evaluate_pair(task_path: str, new_path: str, config: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The pair's result, and whether this process may go on to the next pair."""
    try:
        return run(task_path, new_path, config), True
    except Exception as e:  # the solution's or the task's code failed: a result, not a crash
        return {
            "task": task_path,
            "new": new_path,
            "correct": False,
            "message": f"{type(e).__name__}: {' '.join(str(e).split())[:400]}",
        }, False


def main(argv: list[str]) -> int:
    jobs, config, out_path = json.loads(Path(argv[0]).read_text()), json.loads(argv[1]), argv[2]
    with open(out_path, "a", encoding="utf-8") as out:
        if not torch.cuda.is_available():
            out.write(json.dumps({"index": 0, "error": "no CUDA GPU visible to torch"}) + "\n")
            return 0
        exact_fp32()
        process_guard, flags = process_state(config)
        for index, (task_path, new_path) in enumerate(jobs):
            if config.get("deadline") and time.time() > config["deadline"]:
                return 0
            result, reusable = _evaluate_pair(task_path, new_path, config)
            out.write(json.dumps({"index": index, **result}) + "\n")
            out.flush()
            if not reusable or process_guard.patched() or _numeric_flags() != flags:
                return 0
            if config.get("compile"):
                torch._dynamo.reset()
            gc.collect()
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
