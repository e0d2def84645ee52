"""Both GEMM families run on the CPU emulator (cuda_emu.h; for tensor cores also
gemm_ptx_emu.h, whose ldmatrix/mma follow the PTX ISA) and are compared with the reference:
tile and fragment index math, layouts, tails, batching and epilogues, without a GPU."""
from __future__ import annotations

import dataclasses
import re

import pytest
from cpu_emulation import assert_matches_reference, needs_emulator

from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.sketches import gemm, gemm_tc
from dice_engine.sketches.base import Point, RenderedKernel, Sketch
from dice_engine.sketches.gemm_tc import PTX_BEGIN, PTX_END

_EMULATED_PTX = """using gemm_emu::smem_addr;
using gemm_emu::ldmatrix_x4;
using gemm_emu::ldmatrix_x4_trans;
using gemm_emu::cp_async_16;
using gemm_emu::cp_async_to;
using gemm_emu::cp_async_commit;
using gemm_emu::cp_async_wait;
inline void mma_16x8x16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    gemm_emu::mma<ELEMENT>(d, a, b);
}
"""


def emulable(rendered: RenderedKernel) -> RenderedKernel:
    """The region with launches in emu::launch form and, for tensor cores, the inline PTX
    swapped for gemm_ptx_emu.h (the include is indented: cpu_emulation drops `#include` lines)."""
    def launch(m: re.Match) -> str:
        grid, block = m.group(2).split(",")[:2]
        return f"emu::launch(dim3({grid}), dim3({block}), [&] {{ {m.group(1)}({m.group(3)}); }});"
    source = re.sub(r"([\w:]+)<<<(.+?)>>>\((.*?)\);", launch, rendered.source)
    if PTX_BEGIN in source:
        element = "__nv_bfloat16" if ".bf16.bf16." in source else "__half"
        while PTX_BEGIN in source:   # one block per embedded GEMM (Winograd's embeds one or two)
            start, end = source.index(PTX_BEGIN), source.index(PTX_END) + len(PTX_END)
            source = source[:start] + _EMULATED_PTX.replace("ELEMENT", element) + source[end:]
        source = re.sub(r"extern __shared__ __align__\(16\) (\w+) (\w+)\[\];",
                        r"\1* \2 = reinterpret_cast<\1*>(gemm_emu::dynamic_smem());", source)
        source = ' #include "gemm_ptx_emu.h"\n' + source
    return dataclasses.replace(rendered, source=source)


class Emulated(Sketch):
    """`sketch`, rendering for the emulator (assert_matches_reference renders by itself)."""

    def __init__(self, sketch: Sketch):
        self.inner = sketch
        self.name = sketch.name
        self.pattern = sketch.pattern

    def unsupported(self, problem, arch):
        return self.inner.unsupported(problem, arch)

    def space(self, problem, arch):
        return self.inner.space(problem, arch)

    def default_point(self, problem, arch):
        return self.inner.default_point(problem, arch)

    def _render(self, problem, arch, point, name):
        return emulable(self.inner.render(problem, arch, point, name))


def tc(bm: int, bn: int, bk: int, wm: int, wn: int, stages: int, load: str) -> Point:
    return {"block_m": bm, "block_n": bn, "block_k": bk, "warp_m": wm, "warp_n": wn, "stages": stages,
            "load": load}


def simt(bm: int, bn: int, bk: int, tm: int, tn: int, vector: int, buffering: int,
         k_splits: int = 1) -> Point:
    return {"block_m": bm, "block_n": bn, "block_k": bk, "thread_m": tm, "thread_n": tn, "vector": vector,
            "buffering": buffering, "k_splits": k_splits}


CASES = [
    (gemm_tc, "C = A @ B; A: f16[70, 88]; B: f16[88, 72]", None),
    (gemm_tc, "C = A.T @ B.T; A: bf16[37, 45]; B: bf16[29, 37]", None),
    (gemm_tc, "y = gelu(A @ B + b) * 0.5; A: f16[2, 40, 64]; B: f16[64, 48]; b: f16[48]",
     tc(64, 64, 32, 32, 32, 2, "vector")),
    (gemm_tc, "C = transpose(A, 0, 1) @ B; A: bf16[64, 80]; B: bf16[64, 96]",
     tc(64, 64, 32, 32, 32, 2, "vector")),
    (gemm_tc, "C = A @ W.T; A: f16[130, 136]; W: f16[140, 136]", tc(128, 128, 64, 64, 64, 4, "cp_async")),
    (gemm_tc, "y = A @ B + R; A: f16[M, 40]; B: f16[40, N]; R: f16[M, N]; M=33; N=27", None),
    (gemm, "C = A @ B; A: f32[70, 37]; B: f32[37, 90]", None),
    (gemm, "C = A.T @ W.T; A: f32[36, 100]; W: f32[68, 36]", simt(64, 64, 16, 4, 4, 4, 2)),
    (gemm, "y = relu(A @ B) + R; A: f64[2, 33, 20]; B: f64[2, 20, 17]; R: f64[33, 17]", None),
    (gemm, "C = A @ B; A: f32[M, 64]; B: f32[64, 40]; M=50", simt(64, 64, 16, 4, 4, 4, 1)),
    # split-K: uneven runs of K slices (19 slices over 4 splits), then a batched f64 epilogue
    # merged after the splits, single-buffered
    (gemm, "C = A @ B; A: f32[70, 300]; B: f32[300, 92]", simt(64, 64, 16, 4, 4, 4, 2, k_splits=4)),
    (gemm, "y = relu(A @ B) + R; A: f64[2, 33, 200]; B: f64[2, 200, 17]; R: f64[33, 17]",
     simt(64, 64, 8, 4, 4, 1, 1, k_splits=2)),
    # 4-D @ 2-D: one GEMM over the flattened rows (KernelBench level 1, task 11), with a bias
    (gemm, "y = A @ B + b; A: f32[2, 3, 10, 24]; B: f32[24, 36]; b: f32[36]", simt(64, 64, 16, 4, 4, 4, 2)),
    (gemm_tc, "C = A @ B; A: f16[2, 3, 20, 32]; B: f16[32, 40]", None),
    # triangular masks of a product read the output position in the epilogue (tasks 14, 15)
    (gemm, "C = triu(A @ B, diagonal=1); A: f32[70, 37]; B: f32[37, 90]", None),
    (gemm_tc, "C = tril(A @ B); A: f16[2, 40, 32]; B: f16[32, 72]", None),
    # the cp.async ring (copies land only at the wait that completes their group): a transposed
    # A tile copied element by element with edges and an uneven last slice, float4 copies of
    # col-major operands, scalar copies at odd sizes, and a split-K f64 epilogue
    (gemm, "C = A @ B; A: f32[70, 300]; B: f32[300, 92]", simt(64, 64, 16, 4, 4, 4, 3)),
    (gemm, "C = A.T @ W.T; A: f32[36, 100]; W: f32[68, 36]", simt(64, 64, 16, 4, 4, 4, 4)),
    (gemm, "C = A @ B; A: f32[70, 37]; B: f32[37, 90]", simt(64, 64, 8, 4, 4, 1, 4)),
    (gemm, "y = relu(A @ B) + R; A: f64[2, 33, 200]; B: f64[2, 200, 17]; R: f64[33, 17]",
     simt(64, 64, 8, 4, 4, 1, 3, k_splits=2)),
    # double2 copies: 16 bytes into a k-major tile (A.T), 8 bytes an element into a transposed one (B.T)
    (gemm, "C = A.T @ B.T; A: f64[40, 70]; B: f64[50, 40]", simt(64, 64, 16, 4, 4, 2, 4)),
]


@needs_emulator
@pytest.mark.parametrize("module,text,point", CASES, ids=[
    "tc-cp-async-tails", "tc-bf16-col-col-scalar", "tc-batched-epilogue", "tc-col-row-staged",
    "tc-4-stage-64x64-warps", "tc-symbols-residual", "simt-odd", "simt-col-col-float4",
    "simt-f64-batched-residual", "simt-single-buffer-symbol", "simt-split-k-uneven",
    "simt-split-k-f64-batched-epilogue", "simt-4d-at-2d-bias", "tc-4d-at-2d",
    "simt-triu", "tc-batched-tril", "simt-ring3-transposed-a-tails", "simt-ring4-col-col-float4",
    "simt-ring4-scalar-odd", "simt-ring3-split-k-f64-epilogue", "simt-ring4-f64-double2"])
def test_kernels_compute_the_reference_on_the_cpu_emulator(module, text, point, tmp_path):
    problem = classify(parse_intent(text))
    sketch = module.SKETCHES[0]
    chosen = point or sketch.default_point(problem, ARCHS["sm_90"])
    assert_matches_reference(Emulated(sketch), problem, chosen, tmp_path)
