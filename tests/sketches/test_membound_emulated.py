"""The memory-bound sketches computed on the CPU emulator (cuda_emu.h + g++) and compared with
the reference evaluator: index math, tails, broadcasts, shuffles, barriers and two-kernel merges
checked numerically without a GPU. Small problems only (every CUDA thread is an OS thread)."""
from __future__ import annotations

import dataclasses
import re

import pytest

from dice_engine.arch import ARCHS
from dice_engine.sketches import elementwise, norm, reduction, softmax

from cpu_emulation import assert_matches_reference, needs_emulator
from memory_bound_checks import problem

# What the memory-bound kernels use beyond the emulator's CUDA subset (whose shuffles take a
# width since cuda_emu.h has them): the host stand-ins of device math and the launcher's smem opt-in.
EXTRA_EMULATION = r"""
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
template <class F>
cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int) { return cudaSuccess; }
"""
# A block's dynamic shared memory becomes a static buffer (blocks run one at a time).
DYNAMIC_SMEM = re.compile(r"extern __shared__ __align__\((\d+)\) unsigned char (\w+)\[\];")


class EmulatedSketch:
    """A sketch whose renders carry the extra emulation text."""

    def __init__(self, sketch):
        self.sketch = sketch
        self.name = sketch.name

    def render(self, *args):
        rendered = self.sketch.render(*args)
        source = DYNAMIC_SMEM.sub(r"static __attribute__((aligned(\1))) unsigned char \2[1 << 18];",
                                  rendered.source)
        # The emulator rewrites unqualified `kernel<<<...>>>(...)` launches.
        source = re.sub(r"namespace kn = (\w+);", r"namespace kn = \1;\n    using namespace \1;", source)
        source = re.sub(r"kn::(\w+)<<<", r"\1<<<", source)
        return dataclasses.replace(rendered, source=EXTRA_EMULATION + source)


def by_name(name: str):
    every = [*elementwise.SKETCHES, *reduction.SKETCHES, *softmax.SKETCHES, *norm.SKETCHES]
    return next(s for s in every if s.name == name)


CASES = [
    # elementwise: packs + scalar tail, broadcasts (contiguous, per-pack, gather), one-shot and grid-stride
    ("elementwise.fused", "y = x * s + c; x: f16[10, 36]; s: f16[10, 1]; c: f16[36]", {}),
    ("elementwise.fused", "y = relu(a) * 2.5 + b; a, b: f32[N]; N=1003",
     {"threads": 64, "vec": 4, "unroll": 2, "schedule": "grid_stride"}),
    ("elementwise.fused", "y = where(x > 0, x, 0.1 * z); x: f64[3, 1, 5]; z: f64[7, 5]", {}),
    # reductions: rows (sub-warp and multi-warp groups), argmax ties, columns with a merge, split rows
    ("reduction.rows", "s = sqrt(mean(x * x, dim=-1)); x: f32[5, 300]", {"group": 64, "threads": 128}),
    ("reduction.rows", "i = argmax(x, dim=1); x: bf16[9, 37]", {"group": 8, "threads": 64}),
    ("reduction.columns", "s = sum(x, dim=1, keepdim=True); x: f32[3, 50, 24]",
     {"tile": 16, "split": 4, "vec": 4, "unroll": 2, "chunks": 4}),
    ("reduction.columns", "i = argmin(x, dim=0); x: f16[40, 7]", {"tile": 16, "split": 2, "vec": 1,
                                                                   "unroll": 1, "chunks": 1}),
    ("reduction.split_rows", "s = max(x); x: f32[4096]",
     {"threads": 128, "chunks": 8, "vec": 4, "unroll": 2}),
    ("reduction.split_rows", "s = sum(x, dim=1); x: f16[3, N]; N=1001", {"threads": 128, "chunks": 2}),
    # reductions of 2^16 elements or more accumulate compensated partials (rows, columns, split rows)
    ("reduction.rows", "s = mean(x, dim=1); x: f32[2, 70000]", {"group": 256, "threads": 256}),
    ("reduction.columns", "s = sum(x * 2, dim=0); x: f16[65536, 3]",
     {"tile": 16, "split": 8, "vec": 1, "unroll": 2, "chunks": 4}),
    ("reduction.split_rows", "s = sum(x); x: f32[131072]", {"threads": 128, "chunks": 8}),
    # columns: compensated from 256 rows, 8 rows in flight per single-column thread
    ("reduction.columns", "s = mean(x, dim=1); x: f32[2, 300, 33]",
     {"tile": 32, "split": 1, "vec": 1, "unroll": 8, "chunks": 1}),
    # softmax: registers, shared-memory cache, streaming, columns, split rows
    ("softmax.rows", "y = softmax(x, dim=-1); x: f32[6, 200]", {"group": 32, "threads": 64}),
    ("softmax.rows", "y = log_softmax(x * 0.5, dim=1); x: f16[5, 136]",
     {"group": 16, "threads": 64, "vec": 8, "cache": "shared", "unroll": 2}),
    ("softmax.rows", "y = softmax(x, dim=1) * 2; x: f32[N, 70]; N=3",
     {"group": 64, "threads": 128, "vec": 1, "cache": "none", "unroll": 2}),
    ("softmax.columns", "y = softmax(x, dim=1); x: f32[2, 30, 12]", {"tile": 16, "split": 4, "vec": 4}),
    ("softmax.split_rows", "y = softmax(x, dim=-1); x: f32[2, 1000]",
     {"threads": 128, "chunks": 4, "vec": 4, "unroll": 2}),
    # norms: registers (two-pass), shared cache with Welford, streaming rms, split rows
    ("norm.rows", "y = layer_norm(x, [96], weight=w, bias=b); x: f32[7, 96]; w: f32[96]; b: f32[96]", {}),
    ("norm.rows", "y = layer_norm(x, [100]); x: f32[3, 100]",
     {"group": 32, "threads": 64, "vec": 4, "cache": "shared", "unroll": 2}),
    ("norm.rows", "y = rms_norm(x, [77], weight=w); x: bf16[4, 77]; w: bf16[77]",
     {"group": 8, "threads": 64, "vec": 1, "cache": "none", "unroll": 1}),
    ("norm.split_rows", "y = layer_norm(x, [1000]) + 1; x: f32[2, 1000]",
     {"threads": 128, "chunks": 4, "vec": 4, "unroll": 2}),
]


@needs_emulator
@pytest.mark.parametrize("sketch_name, text, overrides", CASES,
                         ids=[f"{case[0]}-{i}" for i, case in enumerate(CASES)])
def test_kernels_compute_the_reference_on_the_cpu_emulator(sketch_name, text, overrides, tmp_path):
    sketch = by_name(sketch_name)
    p = problem(text)
    assert sketch.unsupported(p, ARCHS["sm_90"]) is None
    point = dict(sketch.default_point(p, ARCHS["sm_90"]), **overrides)
    assert sketch.space(p, ARCHS["sm_90"]).is_legal(point), sketch.space(p, ARCHS["sm_90"]).violations(point)
    assert_matches_reference(EmulatedSketch(sketch), p, point, tmp_path)
