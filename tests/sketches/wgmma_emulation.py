"""Test helpers of the wgmma GEMM sketches: the CPU emulator's view of a rendered region (its
launches turned into emu::launch calls, its inline-PTX wrappers swapped for C++ stand-ins over
gemm_ptx_emu.h), a sketch that renders that way, and the evaluation of the sketches' C layout
expressions."""
from __future__ import annotations

import dataclasses
import re

from dice_engine.sketches.base import RenderedKernel, Sketch
from dice_engine.sketches.gemm_common import PTX_BEGIN, PTX_END

def c_eval(expr: str, **env: int) -> int:
    """A C integer expression over non-negative ints (with ^), evaluated in Python."""
    assert re.fullmatch(r"[\w\s+*/%()^]+", expr), expr
    return int(eval(expr.replace("/", "//"), {}, env))   # noqa: S307 (the sketch's own table)


# The wgmma wrappers both sketches use; ELEMENT is the operands' C++ type.
WGMMA_STAND_INS = """inline void wgmma_fence() {}
inline void wgmma_commit() {}
template <int N>
void wgmma_wait() {}
template <int N>
void fence_registers(float (&)[N]) {}
inline void wgmma_m64k16(float (&d)[BN / 2], uint64_t a, uint64_t b) {
    gemm_emu::wgmma<ELEMENT>(d, a, b, TRANS_A, TRANS_B);
}
"""


def emulable(rendered: RenderedKernel, stand_ins: str) -> RenderedKernel:
    """The region with emu::launch launches and the inline PTX swapped for `stand_ins` (the
    include is indented: cpu_emulation drops `#include` lines)."""
    def launch(m: re.Match) -> str:
        grid, block = m.group(2).split(",")[:2]
        return f"emu::launch(dim3({grid}), dim3({block}), [&] {{ {m.group(1)}({m.group(3)}); }});"
    source = re.sub(r"([\w:]+)<<<(.+?)>>>\((.*?)\);", launch, rendered.source)
    element = "__nv_bfloat16" if ".bf16.bf16" in source else "__half"
    start, end = source.index(PTX_BEGIN), source.index(PTX_END) + len(PTX_END)
    source = source[:start] + stand_ins.replace("ELEMENT", element) + source[end:]
    source = source.replace("extern __shared__ __align__(1024) uint8_t smem_raw[];",
                            "uint8_t* smem_raw = gemm_emu::shared_bytes;")
    return dataclasses.replace(rendered, source=' #include "gemm_ptx_emu.h"\n' + source)


class Emulated(Sketch):
    """`sketch`, rendering for the emulator."""

    def __init__(self, sketch: Sketch, stand_ins: str):
        self.sketch, self.stand_ins = sketch, stand_ins
        self.name, self.pattern = sketch.name, sketch.pattern

    def unsupported(self, problem, arch):
        return self.sketch.unsupported(problem, arch)

    def space(self, problem, arch):
        return self.sketch.space(problem, arch)

    def default_point(self, problem, arch):
        return self.sketch.default_point(problem, arch)

    def _render(self, problem, arch, point, name):
        return emulable(self.sketch.render(problem, arch, point, name), self.stand_ins)
