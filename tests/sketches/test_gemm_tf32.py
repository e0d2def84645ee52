"""The opt-in TF32 GEMM (`precision=tf32`): served only when asked for, compiled by nvcc, and
run on the CPU emulator (cuda_emu.h, with gemm_ptx_emu.h's m16n8k8 TF32 mma written from the
PTX ISA) on operands that TF32 holds exactly, so any index or pipeline error shows as a wrong
element."""

from __future__ import annotations

import dataclasses
import re
import shutil

import numpy as np
import pytest
from cpu_emulation import assert_matches_reference, needs_emulator

from dice_engine.arch import ARCHS, resolve
from dice_engine.compile import compile_cuda
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.sketches.gemm_common import PTX_BEGIN, PTX_END
from dice_engine.sketches.gemm_tf32 import Tf32Gemm
from dice_engine.sketches.registry import candidates

_EMULATED_PTX = """using gemm_emu::smem_addr;
using gemm_emu::cp_async_16;
using gemm_emu::cp_async_commit;
using gemm_emu::cp_async_wait;
using gemm_emu::to_tf32;
inline void mma_tf32_16x8x8(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    gemm_emu::mma_tf32(d, a, b);
}
"""


class EmulatedTf32(Tf32Gemm):
    def render(self, problem, arch, point, name):
        rendered = super().render(problem, arch, point, name)

        def launch(m: re.Match) -> str:
            grid, block = m.group(2).split(",")[:2]
            return f"emu::launch(dim3({grid}), dim3({block}), [&] {{ {m.group(1)}({m.group(3)}); }});"

        source = re.sub(r"([\w:]+)<<<(.+?)>>>\((.*?)\);", launch, rendered.source)
        start, end = source.index(PTX_BEGIN), source.index(PTX_END) + len(PTX_END)
        source = source[:start] + _EMULATED_PTX + source[end:]
        source = source.replace(
            "extern __shared__ __align__(16) float smem[];",
            "float* smem = reinterpret_cast<float*>(gemm_emu::dynamic_smem());",
        )
        return dataclasses.replace(rendered, source=' #include "gemm_ptx_emu.h"\n' + source)


def tf32(bm: int, bn: int, bk: int, wm: int, wn: int, stages: int) -> dict:
    return {"block_m": bm, "block_n": bn, "block_k": bk, "warp_m": wm, "warp_n": wn, "stages": stages}


CASES = [
    # M, N and K tails (K = 36: two full 16-deep slices and a zero-filled third)
    ("C = A @ B; A: f32[70, 36]; B: f32[36, 92]; precision=tf32", tf32(64, 64, 16, 32, 32, 2)),
    # a batched product with a broadcast bias and an activation, 128x128 blocks of 64x32 warps
    (
        "y = relu(A @ B + b); A: f32[2, 40, 64]; B: f32[2, 64, 136]; b: f32[136]; precision=tf32",
        tf32(128, 128, 32, 64, 32, 3),
    ),
    # a 4-deep ring over 13 slices, 3-D @ 2-D
    ("C = A @ B; A: f32[2, 33, 200]; B: f32[200, 40]; precision=tf32", tf32(64, 64, 16, 32, 64, 4)),
]


def _exact_inputs(problem) -> dict[str, np.ndarray]:
    """Small integers: TF32 holds them exactly and fp32 sums them exactly."""
    rng = np.random.default_rng(7)
    return {
        name: rng.integers(-3, 4, size=tuple(decl.shape)).astype(np.float32)
        for name, decl in problem.program.inputs.items()
    }


@needs_emulator
@pytest.mark.parametrize("text,point", CASES, ids=["tails", "batched-epilogue-128", "ring-3d-at-2d"])
def test_tf32_kernel_computes_the_product_on_the_cpu_emulator(text, point, tmp_path):
    problem = classify(parse_intent(text))
    assert_matches_reference(EmulatedTf32(), problem, point, tmp_path, inputs=_exact_inputs(problem))


def test_tf32_serves_only_intents_that_opt_in():
    plain = classify(parse_intent("C = A @ B; A: f32[4096, 4096]; B: f32[4096, 4096]"))
    assert "gemm.tf32_mma" not in [s.name for s in candidates(plain, resolve("sm_90"))]
    for text in (
        "C = A @ B; A: f32[4096, 4096]; B: f32[4096, 4096]; precision=tf32",
        "fp32 matrix multiplication of 1024x1024 matrices using tensor cores",
        "用张量核心实现 float32 矩阵乘法 2048x2048",
        "TF32 matmul of 512x512 matrices",
    ):
        program = parse_intent(text)
        assert program.options["precision"] == "tf32", text
        assert all(d.dtype.name == "f32" for d in program.inputs.values())
        assert "gemm.tf32_mma" in [s.name for s in candidates(classify(program), resolve("sm_90"))], text
    half = classify(parse_intent("fp16 matrix multiplication of 1024x1024 matrices using tensor cores"))
    assert "precision" not in half.program.options
    reason = Tf32Gemm().unsupported(
        classify(parse_intent("C = A @ B; A: f32[64, 30]; B: f32[30, 64]; precision=tf32")), resolve("sm_90")
    )
    assert reason is not None and "multiples of 4" in reason


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA toolkit) not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_default_compiles_without_spills_and_rounds_with_cvt_rna(arch):
    problem = classify(parse_intent("C = A @ B; A: f32[4096, 4096]; B: f32[4096, 4096]; precision=tf32"))
    sketch = Tf32Gemm()
    rendered = sketch.render(problem, ARCHS[arch], sketch.default_point(problem, ARCHS[arch]), "k")
    assert "cvt.rna.tf32.f32" in rendered.source and "m16n8k8.row.col.f32.tf32.tf32.f32" in rendered.source
    result = compile_cuda(rendered.source, arch, output="cubin")
    assert result.ok, result.first_error()
    assert all(r.spill_bytes == 0 for r in result.resources.values())
