"""The public API: the seed example, streaming, cancellation, and whole files."""
from __future__ import annotations

import json
import shutil
import threading

import pytest

from dice_engine import CUDAGenerator, GenerationError, IntentError, generate_file
from dice_engine.intent import find_intents

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA toolkit) not installed")

JSON_KEYS = {"source", "kernel", "launcher", "arch", "sketch", "tokens", "resources", "verified", "time_us",
             "reference_time_us", "rounds", "prior"}
MAP = "y = relu(a) * 2.5 + b; a, b: f32[1048576]"


def test_seed_example_chinese_matmul_with_shared_memory():
    result = CUDAGenerator(device="a100").generate("实现一个矩阵乘法内核，使用共享内存优化", precision="fp16")
    assert result.arch == "sm_80" and result.sketch.startswith("gemm")
    assert "no size given: assumed 4096x4096" in result.notes
    assert f'extern "C" void {result.name}_launch(' in result.launcher
    assert result.launcher.strip() in result.source and result.launcher.strip() not in result.kernel
    assert "__global__" in result.kernel
    out = json.loads(json.dumps(result.to_json()))
    assert set(out) == JSON_KEYS
    assert set(out["resources"]) == {"registers", "spill_bytes", "smem_bytes", "occupancy"}
    assert out["resources"]["registers"] > 0 and 0 < out["resources"]["occupancy"] <= 1
    assert out["verified"] is None and out["time_us"] is None and out["rounds"] >= 1
    assert [e.index for e in result.history] == list(range(len(result.history)))
    assert len(result.history) <= 24


def test_stream_yields_improvements_and_stops_on_cancel():
    generator = CUDAGenerator("h100", budget=6)
    results = list(generator.stream(MAP))
    costs = [r.cost_us for r in results]
    assert costs and all(b < a for a, b in zip(costs, costs[1:]))
    assert results[-1].rounds >= results[0].rounds

    cancel = threading.Event()
    seen = []
    for r in generator.stream(MAP, cancel=cancel):
        seen.append(r)
        cancel.set()
    assert len(seen) == 1 and len(seen[0].history) == 1


def test_errors_say_why():
    with pytest.raises(IntentError):
        CUDAGenerator(default_shape=None).generate("matrix multiplication with shared memory")
    with pytest.raises(GenerationError, match="'dz_' or 'dice_' are reserved: dz_x"):
        CUDAGenerator().generate("y = sum(softmax(dz_x, dim=1), dim=0); dz_x: f32[64, 64]")


def test_several_heavy_operators_become_one_launcher_of_several_kernels():
    result = CUDAGenerator(budget=2).generate("y = sum(softmax(x, dim=1), dim=0); x: f32[64, 64]")
    assert result.sketch == "generic.lowered"
    assert result.source.count("__global__") == 3          # max, sum, the outer sum (softmax fused in)
    assert "cudaMallocAsync" in result.source and "cudaFreeAsync" in result.source


FILE = """\
#include <cstdio>
// @dice: y = x * 2; x: f32[1024]
int keep_me = 1;
   // @dice: y = x * 2; x: f32[1024]
// @dice: y = softmax(x); x: f32[4]
// @dice: a matrix multiplication with shared memory
void also_kept() {}
"""


def _outside_regions(text: str) -> str:
    out, inside = [], False
    for line in text.splitlines(keepends=True):
        if "@dice-begin" in line:
            inside = True
        elif "@dice-end" in line:
            inside = False
        elif not inside:
            out.append(line)
    return "".join(out)


def test_generate_file_fills_regions_and_touches_nothing_else():
    generator = CUDAGenerator("sm_80", budget=2, default_shape=None)
    text, reports = generate_file(FILE, generator=generator)
    assert [r.status for r in reports] == ["generated", "generated", "error", "error"]
    assert _outside_regions(text) == FILE
    first, second = reports[0].result, reports[1].result
    assert first.name != second.name and second.name.startswith(first.name)    # unique per file
    assert "dim" in reports[2].message and reports[2].line == 4
    assert "no shape given" in reports[3].message
    assert all(site.region is not None for site in find_intents(text)[:2])

    again, reports = generate_file(text, generator=generator, only_stale=True)
    assert again == text and [r.status for r in reports[:2]] == ["up-to-date", "up-to-date"]

    lines = text.splitlines(keepends=True)
    body_line = next(i for i, line in enumerate(lines) if "__global__" in line)
    lines[body_line] = "// tuned by hand\n" + lines[body_line]
    edited = "".join(lines)
    out, reports = generate_file(edited, generator=generator)
    assert reports[0].status == "edited" and "// tuned by hand" in out


@pytest.mark.gpu
def test_on_a_gpu_every_yielded_kernel_is_verified_and_timed():
    from dice_engine.runner import GpuRunner
    with GpuRunner() as runner:
        results = list(CUDAGenerator(budget=4, runner=runner).stream(MAP))
    assert results and all(r.verified is True and r.time_us > 0 and r.gbps > 0 for r in results)
    times = [r.time_us for r in results]
    assert all(b < a for a, b in zip(times, times[1:]))
    assert results[-1].to_json()["time_us"] == results[-1].time_us
    assert 0 < results[-1].roofline_fraction <= 1.5     # measured ceilings; a little above 1 is noise
    reference = results[-1].reference_time_us
    assert reference is None or reference > 0            # None only where torch has no CUDA in the child


class FakeRunner:
    """Stands in for GpuRunner (CI has no GPU): each candidate 'measures' faster than the last."""

    def __init__(self) -> None:
        self.calls = 0

    def evaluate(self, rendered, problem, arch):
        from dice_engine.runner import RunReport
        self.calls += 1
        time_us = 100.0 / self.calls
        return RunReport(verified=True, verdict="ok", time_us=time_us, gbps=12.5 / time_us * 1e3,
                         tflops=None, roofline_fraction=0.5, reference_time_us=80.0)


def test_the_runners_figures_reach_the_result_but_not_the_json_object():
    result = CUDAGenerator("h100", budget=3, runner=FakeRunner()).generate(MAP)
    assert result.verified is True and result.time_us == pytest.approx(100.0 / 3)
    assert result.gbps == pytest.approx(12.5 / result.time_us * 1e3)
    assert result.tflops is None and result.roofline_fraction == 0.5 and result.reference_time_us == 80.0
    out = result.to_json()
    assert set(out) == JSON_KEYS and out["reference_time_us"] == 80.0
    timing = next(line for line in result.report() if "timing" in line)
    assert "375 GB/s" in timing and "50% of roofline" in timing and "PyTorch reference 80.0 us" in timing
