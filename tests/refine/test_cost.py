"""Sanity of the analytic cost model: it must rank candidates the way hardware does in the
plain cases."""
from __future__ import annotations

import math

from tiny_sketch import scale_problem

from dice_engine.arch import resolve
from dice_engine.compile import CompileResult, KernelResources
from dice_engine.ir.dtypes import F16
from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.ops import input_tensor, make
from dice_engine.ir.patterns import classify
from dice_engine.ir.work import work
from dice_engine.refine import estimate
from dice_engine.sketches.base import Launch, RenderedKernel

A100 = resolve("a100")
SIZE = 4096


def _gemm():
    a, b = input_tensor("A", F16, (SIZE, SIZE)), input_tensor("B", F16, (SIZE, SIZE))
    program = Program({"A": TensorDecl("A", F16, (SIZE, SIZE)), "B": TensorDecl("B", F16, (SIZE, SIZE))},
                      "C", make("matmul", [a, b]))
    return classify(program)


def _candidate(tile: int, threads: int, registers: int, smem: int, spill: int = 0, source: str = "simt"):
    grid = SIZE // tile
    launch = Launch("k", (grid, grid, 1), (threads, 1, 1), smem)
    rendered = RenderedKernel("t", {}, source, ["k"], "", [], [launch], "")
    resources = KernelResources(registers, spill // 2, spill // 2, smem, 0, 1)
    compiled = CompileResult(True, resources={"k": resources})
    return rendered, compiled


def test_gemm_work():
    w = work(_gemm())
    assert w.flops == 2 * SIZE ** 3 and w.dram_bytes == 3 * SIZE * SIZE * 2
    assert (w.gemm.m, w.gemm.n, w.gemm.k) == (SIZE, SIZE, SIZE)


def test_big_tiles_beat_tiny_tiles_on_a_big_gemm():
    problem = _gemm()
    big = estimate(problem, A100, *_candidate(128, 256, 128, 16384))
    tiny = estimate(problem, A100, *_candidate(16, 256, 32, 2048))
    assert big.time_us * 3 < tiny.time_us
    assert any("small output tile" in n for n in tiny.notes)
    assert big.bound == "compute"
    # roofline floor: never faster than the FP32 pipes allow
    assert big.time_us >= 2 * SIZE ** 3 / (A100.fp32_tflops * 1e6)


def test_tensor_core_code_uses_the_tensor_core_rate():
    problem = _gemm()
    simt = estimate(problem, A100, *_candidate(128, 256, 128, 16384))
    wmma = "nvcuda::wmma::mma_sync(c, a, b, c);"
    tc = estimate(problem, A100, *_candidate(128, 256, 128, 16384, source=wmma))
    assert tc.time_us * 4 < simt.time_us


def test_on_hopper_only_wgmma_reaches_the_tensor_core_peak():
    problem = _gemm()
    h100 = resolve("sm_90")
    warp_mma = estimate(problem, h100, *_candidate(128, 256, 128, 16384, source='asm("mma.sync.aligned");'))
    wgmma = estimate(problem, h100, *_candidate(128, 256, 128, 16384, source='asm("wgmma.mma_async");'))
    assert wgmma.compute_us < warp_mma.compute_us
    # Before Hopper there is no wgmma, and mma.sync is the full-rate path.
    a100_mma = estimate(problem, A100, *_candidate(128, 256, 128, 16384, source='asm("mma.sync.aligned");'))
    assert math.isclose(a100_mma.compute_us, problem_flops_us(problem, A100.fp16_tc_tflops), rel_tol=1e-6)


def problem_flops_us(problem, tflops: float) -> float:
    return work(problem).flops / (tflops * 1e6)


def test_spills_are_penalised():
    problem = _gemm()
    clean = estimate(problem, A100, *_candidate(128, 256, 128, 16384))
    spilling = estimate(problem, A100, *_candidate(128, 256, 128, 16384, spill=512))
    assert spilling.time_us > 1.5 * clean.time_us
    assert spilling.notes[0].startswith("512 bytes of register spills")


def test_memory_bound_kernel_and_occupancy():
    problem = scale_problem()
    floor = work(problem).dram_bytes / (A100.dram_gbps * 1e3)
    blocks = (1 << 26) // 256

    def run(registers: int):
        launch = Launch("k", (blocks, 1, 1), (256, 1, 1), 0)
        rendered = RenderedKernel("t", {}, "", ["k"], "", [], [launch], "")
        resources = {"k": KernelResources(registers, 0, 0, 0, 0, 0)}
        return estimate(problem, A100, rendered, CompileResult(True, resources=resources))

    full, starved = run(32), run(200)
    assert full.bound == "memory" and floor <= full.time_us < 1.2 * floor + 5
    assert starved.occupancy.limiter == "registers" and starved.time_us > 1.5 * full.time_us


def test_a_kernel_that_cannot_launch_costs_infinity():
    problem = _gemm()
    est = estimate(problem, A100, *_candidate(128, 1024, 255, 0))
    assert math.isinf(est.time_us) and "cannot launch" in est.notes[0]
