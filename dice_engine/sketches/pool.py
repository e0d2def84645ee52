"""max_pool2d / avg_pool2d over NCHW (torch semantics: max ignores padding and propagates NaN;
avg counts padding, count_include_pad=True, so the divisor is always kh * kw).

`pool.direct`: each thread computes `outputs` outputs of one output row, spaced `block_x`
apart so a warp's loads and stores run along OW (coalesced); the window loops are fully
unrolled with the kernel size as a constant. Overlapping windows are re-read through L1
rather than staged in shared memory (pooling is a small fraction of the bytes moved). A fused
prologue applies to loaded elements (padding stays -inf / 0), a fused epilogue to the result.
"""
from __future__ import annotations

import math

from ..arch import ArchSpec
from ..ir.graph import Dim
from ..ir.patterns import Problem
from .base import (DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, frame, launcher_params,
                   launcher_signature)
from .fusion import (fusion_note, fusion_unsupported, kernel_args, kernel_params, load_operand,
                    store_output)

HINT = 4096


def _c(d: Dim) -> str:
    return f"{d}LL" if isinstance(d, int) else f"(long long){d}"


class DirectPool(Sketch):
    name = "pool.direct"
    pattern = "pool"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        anchor = problem.anchor
        if anchor is None or anchor.op not in ("max_pool2d", "avg_pool2d"):
            return "pool.direct serves max_pool2d and avg_pool2d"
        if not anchor.dtype.is_float:
            return f"{anchor.op} on {anchor.dtype} is not supported (floating types only, as in torch)"
        return fusion_unsupported(problem)

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        def threads_fit(p: Point) -> str | None:
            threads = p["block_x"] * p["block_y"]
            if not 64 <= threads <= arch.max_threads_per_block:
                return f"{threads} threads per block (want 64..{arch.max_threads_per_block})"
            return None
        return DesignSpace(
            [Token("block_x", (32, 64, 128), "threads along OW", (Role.THREADS,)),
             Token("block_y", (1, 2, 4, 8), "threads along OH", (Role.THREADS,)),
             Token("outputs", (1, 2, 4), "outputs per thread along OW, block_x apart", (Role.WORK,))],
            [threads_fit])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        out_w = problem.output.shape[3]
        block_x = 32 if out_w <= 32 else (64 if out_w <= 64 else 128)
        return {"block_x": block_x, "block_y": max(1, min(8, 256 // block_x)), "outputs": 1}

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        anchor = problem.anchor
        assert anchor is not None
        block_x, block_y, outputs = point["block_x"], point["block_y"], point["outputs"]
        batch, channels, in_h, in_w = anchor.args[0].shape
        out_h, out_w = anchor.shape[2], anchor.shape[3]
        (kh, kw), (sh, sw), (ph, pw) = (anchor.attr(k) for k in ("kernel_size", "stride", "padding"))
        is_max = anchor.op == "max_pool2d"
        acc = {"f64": "double"}.get(anchor.dtype.name, "float")
        kernel = f"{name}_kernel"
        i5 = " " * 20
        code, (value,) = load_operand(problem, "in_plane + (long long)in_row * kInW + in_col", 1, i5)
        if is_max:
            init = "-INFINITY"
            combine = "if (value > best || isnan(value)) best = value;   // NaN wins, as in torch"
            result = "best"
        else:
            init, combine = "Acc(0)", "best += value;"
            result = "best / Acc(kKernelH * kKernelW)"   # padding counts (count_include_pad=True)
        store = store_output(problem, "out_plane + (long long)oh * kOutW + ow", [result], " " * 12)
        device = f"""using Acc = {acc};
constexpr int kKernelH = {kh}, kKernelW = {kw};
constexpr int kStrideH = {sh}, kStrideW = {sw};
constexpr int kPadH = {ph}, kPadW = {pw};
constexpr int kInH = {in_h}, kInW = {in_w};
constexpr int kOutH = {out_h}, kOutW = {out_w};
constexpr int kBlockX = {block_x};   // threads along OW
constexpr int kBlockY = {block_y};   // threads along OH
constexpr int kOutputs = {outputs};   // outputs per thread, kBlockX apart along OW

// Block (x, y, z): output columns [x * kBlockX * kOutputs, +kBlockX * kOutputs) of rows
// [y * kBlockY, +kBlockY), for planes (n, c) = z, z + gridDim.z, ...
__global__ void __launch_bounds__(kBlockX * kBlockY)
{kernel}({kernel_params(problem)}) {{
    const long long planes = {_c(batch)} * {_c(channels)};
    const int oh = blockIdx.y * kBlockY + threadIdx.y;
    if (oh >= kOutH) return;   // no barriers in this kernel
    const int h0 = oh * kStrideH - kPadH;
    const int first_ow = blockIdx.x * (kBlockX * kOutputs) + threadIdx.x;
    for (long long plane = blockIdx.z; plane < planes; plane += gridDim.z) {{
        const long long in_plane = plane * kInH * kInW;
        const long long out_plane = plane * kOutH * kOutW;
        #pragma unroll
        for (int o = 0; o < kOutputs; ++o) {{
            const int ow = first_ow + o * kBlockX;
            if (ow >= kOutW) continue;
            const int w0 = ow * kStrideW - kPadW;
            Acc best = {init};
            #pragma unroll
            for (int i = 0; i < kKernelH; ++i) {{
                const int in_row = h0 + i;
                if (in_row < 0 || in_row >= kInH) continue;   // padding: skipped by max, zero in the avg sum
                #pragma unroll
                for (int j = 0; j < kKernelW; ++j) {{
                    const int in_col = w0 + j;
                    if (in_col < 0 || in_col >= kInW) continue;
{code}{i5}const Acc value = (Acc)({value});
{i5}{combine}
                }}
            }}
{store}        }}
    }}
}}"""
        params = launcher_params(problem)
        launcher = f"""{launcher_signature(name, params)} {{
    using namespace dice_{name};
    const long long planes = {_c(batch)} * {_c(channels)};
    if (planes == 0) return;
    const dim3 grid((kOutW + kBlockX * kOutputs - 1) / (kBlockX * kOutputs), (kOutH + kBlockY - 1) / kBlockY,
                    (unsigned)(planes < 65535 ? planes : 65535));   // the kernel loops over further planes
    {kernel}<<<grid, dim3(kBlockX, kBlockY), 0, stream>>>({kernel_args(problem)});
}}"""
        kind = "max" if is_max else "average (count_include_pad)"
        strategy = (f"direct {kind} pooling {kh}x{kw}/{sh}x{sw} pad {ph}x{pw}, {block_x}x{block_y} threads, "
                    f"{outputs} output(s) per thread along OW (coalesced){fusion_note(problem)}")
        source = frame(name=name, strategy=strategy, tokens=dict(point), device_code=device,
                       launcher_code=launcher)
        planes = math.prod(problem.program.concrete_shape((batch, channels), HINT))
        grid = (-(-out_w // (block_x * outputs)), -(-out_h // block_y), max(1, min(planes, 65535)))
        launch = Launch(kernel, grid, (block_x, block_y, 1), 0)
        return RenderedKernel(self.name, dict(point), source, [f"dice_{name}::{kernel}"], launcher, params,
                              [launch], f"direct {anchor.op} {kh}x{kw}, {block_x}x{block_y}x{outputs}")


SKETCHES: list[Sketch] = [DirectPool()]

SAMPLE_INTENTS: list[str] = [
    "y = max_pool2d(x, kernel_size=2); x: f32[32, 64, 112, 112]",
    "y = max_pool2d(x, kernel_size=3, stride=2, padding=1); x: f32[16, 64, 112, 112]",
    "y = avg_pool2d(x, kernel_size=3, stride=1, padding=1); x: f32[8, 128, 56, 56]",
    "y = avg_pool2d(x, kernel_size=2, stride=2); x: f16[32, 256, 28, 28]",
    "y = max_pool2d(x, kernel_size=3, stride=2); x: bf16[4, 96, 55, 55]",
    "y = max_pool2d(x, kernel_size=2); x: f64[2, 3, 31, 17]",
    "y = max_pool2d(x, kernel_size=3, stride=2, padding=1); x: f32[N, 64, 56, 56]; N=7",
    "y = relu(avg_pool2d(x, kernel_size=7)); x: f32[64, 512, 7, 7]",
]
