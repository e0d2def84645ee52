"""Child process of test_long_accumulation_gpu.py: builds one DICE kernel, runs it on the GPU at
its intent's full shape on fresh random inputs (output poisoned with NaN), and prints one JSON
line: the kernel's and PyTorch's fp32 max-abs errors against a float64 truth, and both times.

    python long_accumulation_child.py '{"intent": ..., "sketch": ..., "point": {...} | null,
                                        "expr": "A @ x", "arch": "sm_90", "seed": 0}'
"""
from __future__ import annotations

import ctypes
import json
import sys

import torch

from dice_engine.arch import resolve
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.runner.build import build_library, launcher_symbol
from dice_engine.sketches.registry import ALL_SKETCHES

TIMED_RUNS = 10


def _median_ms(run) -> float:
    times = []
    for _ in range(TIMED_RUNS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def main(case: dict) -> dict:
    torch.backends.cuda.matmul.allow_tf32 = False   # PyTorch's own fp32, as DICE's kernels compute
    arch = resolve(case["arch"])
    problem = classify(parse_intent(case["intent"]))
    sketch = next(s for s in ALL_SKETCHES if s.name == case["sketch"])
    point = {**sketch.default_point(problem, arch), **(case.get("point") or {})}
    rendered = sketch.render(problem, arch, point, "long_acc")
    built = build_library(rendered.source, rendered.compile_arch(arch.name))
    if built.library is None:
        return {"error": f"build failed: {built.error}"}
    lib = ctypes.CDLL(str(built.library))
    launch = getattr(lib, launcher_symbol(rendered))
    launch.restype = None
    launch.argtypes = [ctypes.c_void_p] * (len(rendered.params) + 1)

    generator = torch.Generator(device="cuda").manual_seed(case["seed"])
    program = problem.program
    draw = torch.rand if case.get("draw") == "rand" else torch.randn   # rand: KernelBench's own inputs
    inputs = {name: draw(tuple(decl.shape), generator=generator, device="cuda", dtype=torch.float32)
              for name, decl in program.inputs.items()}
    out = torch.full(tuple(program.output.shape), float("nan"), device="cuda", dtype=torch.float32)
    pointers = [inputs[p.name].data_ptr() if p.role == "input" else out.data_ptr() for p in rendered.params]
    stream = torch.cuda.current_stream().cuda_stream

    def run() -> None:
        launch(*pointers, stream)

    run()
    torch.cuda.synchronize()
    if lib.dice_runner_last_error() != 0:
        return {"error": "launch failed"}
    ours = out.double().clone()
    torch_fp32 = eval(case["expr"], {}, dict(inputs)).double()   # noqa: S307 (the test's own expression)
    truth = eval(case["expr"], {}, {k: v.double() for k, v in inputs.items()})   # noqa: S307
    result = {
        "tokens": point,
        "unwritten": int(torch.isnan(ours).sum()),
        "dice_error": float((ours.reshape(truth.shape) - truth).abs().max()),
        "torch_error": float((torch_fp32 - truth).abs().max()),
        "dice_ms": _median_ms(run),
        "torch_ms": _median_ms(lambda: eval(case["expr"], {}, dict(inputs))),   # noqa: S307
    }
    return result


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
