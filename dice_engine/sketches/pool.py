"""max/avg pooling over NCHW and NCDHW (2-D and 3-D pools), torch semantics: max ignores padding
and propagates NaN, with any dilation; avg divides by the window clipped to the padded input
(count_include_pad, the default) or to the input itself (count_include_pad=False); ceil_mode
windows that start inside the padded input are clipped the same way.

`pool.direct`: each thread computes `outputs` outputs of one output row, spaced `block_x`
apart so a warp's stores run along OW (coalesced); blocks along z walk (plane, output depth)
pairs. The window loops are fully unrolled with the kernel size as a constant (a 2-D pool is a
3-D one of depth 1). Two layouts: `direct`, every thread reads its own window (overlapping
windows re-read through L1; a warp's loads are stride_w apart), and `separable`, for wide
strided windows, where a warp's lanes read the input columns under its 32 outputs
contiguously, fold them over the window's rows in registers, and each lane then folds its
window's columns from the warp's shared-memory row (max and sum are separable). A fused
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
SEPARABLE_FROM = 16   # kernel_w * stride_w from which the prior reads windows separably
MAX_SPAN_LOADS = 32   # registers per lane holding a warp's column partials


def _c(d: Dim) -> str:
    return f"{d}LL" if isinstance(d, int) else f"(long long){d}"


POOLED = {"max_pool2d": 2, "avg_pool2d": 2, "max_pool3d": 3, "avg_pool3d": 3}


def _window(anchor) -> dict[str, tuple[int, int, int]]:
    """Per window attribute, its (depth, height, width) values (depth neutral for 2-D pools)."""
    d = POOLED[anchor.op]
    neutral = {"kernel_size": 1, "stride": 1, "padding": 0, "dilation": 1}
    return {k: (neutral[k],) * (3 - d) + tuple(anchor.attr(k, (neutral[k],) * d))
            for k in ("kernel_size", "stride", "padding", "dilation")}


def _divisor(include_pad: bool, ceil_mode: bool) -> str:
    """The average's divisor: the whole window when it never leaves the padded input (floor mode
    counting padding), else per axis the window clipped as torch clips it."""
    if include_pad and not ceil_mode:
        return "Acc(kKernelD * kKernelH * kKernelW)"
    spans = []
    for axis, start in (("D", "d0"), ("H", "h0"), ("W", "w0")):
        end = f"min({start} + kKernel{axis}, kIn{axis} + kPad{axis})"
        spans.append(f"({end} - {start})" if include_pad else f"(min({end}, kIn{axis}) - max({start}, 0))")
    return f"Acc({' * '.join(spans)})"


def _span_loads(anchor) -> int:
    """Loads per lane covering the input columns under a warp's 32 consecutive outputs."""
    w = _window(anchor)
    span = 31 * w["stride"][2] + (w["kernel_size"][2] - 1) * w["dilation"][2] + 1
    return -(-span // 32)


def _acc(problem: Problem) -> str:
    return {"f64": "double"}.get(problem.anchor.dtype.name, "float")


def _separable_body(load_code: str, value: str, store: str, init: str) -> str:
    """The kernel's loop over a slice's outputs in the separable layout (warp-uniform control,
    the warp's own shared-memory row `cols`)."""
    i5 = " " * 20
    return f"""        #pragma unroll
        for (int o = 0; o < kOutputs; ++o) {{
            const int first_ow = warp_ow + o * kBlockX;   // the warp's 32 consecutive outputs
            if (first_ow >= kOutW) continue;   // warp-uniform
            const int c0 = first_ow * kStrideW - kPadW;   // the first input column under them
            Acc part[kSpanLoads];   // lane's columns c0 + lane + 32 s, folded over the window's rows
            #pragma unroll
            for (int s = 0; s < kSpanLoads; ++s) part[s] = {init};
            #pragma unroll
            for (int a = 0; a < kKernelD; ++a) {{
                const int in_d = d0 + a * kDilD;
                if (in_d < 0 || in_d >= kInD) continue;   // padding: skipped by max, zero in the avg sum
                #pragma unroll
                for (int i = 0; i < kKernelH; ++i) {{
                    const int in_row = h0 + i * kDilH;
                    if (in_row < 0 || in_row >= kInH) continue;
                    #pragma unroll
                    for (int s = 0; s < kSpanLoads; ++s) {{
                        const int in_col = c0 + s * 32 + lane;   // contiguous across the warp
                        if (s * 32 + lane >= kSpan || in_col < 0 || in_col >= kInW) continue;
{load_code}{i5}    fold(part[s], (Acc)({value}));
                    }}
                }}
            }}
            __syncwarp();   // the previous outputs' reads of cols are done
            #pragma unroll
            for (int s = 0; s < kSpanLoads; ++s) cols[s * 32 + lane] = part[s];
            __syncwarp();
            const int ow = first_ow + lane;
            if (ow >= kOutW) continue;
            const int w0 = ow * kStrideW - kPadW;
            Acc best = {init};
            #pragma unroll
            for (int j = 0; j < kKernelW; ++j) fold(best, cols[lane * kStrideW + j * kDilW]);
            (void)w0;
{store}        }}"""


class DirectPool(Sketch):
    name = "pool.direct"
    pattern = "pool"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        anchor = problem.anchor
        if anchor is None or anchor.op not in POOLED:
            return "pool.direct serves 2-D and 3-D max and average pools"
        if anchor.rank != POOLED[anchor.op] + 2:
            return f"{anchor.op} without batch and channel dimensions is served by the general lowering"
        if not anchor.dtype.is_float:
            return f"{anchor.op} on {anchor.dtype} is not supported (floating types only, as in torch)"
        return fusion_unsupported(problem)

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        def threads_fit(p: Point) -> str | None:
            threads = p["block_x"] * p["block_y"]
            if not 64 <= threads <= arch.max_threads_per_block:
                return f"{threads} threads per block (want 64..{arch.max_threads_per_block})"
            return None
        def span_fits(p: Point) -> str | None:
            if p["layout"] != "separable":
                return None
            if p["outputs"] != 1:
                return "the separable layout computes one output per lane (outputs=1)"
            loads = _span_loads(problem.anchor)
            smem = (p["block_x"] * p["block_y"] // 32) * loads * 32 * (8 if _acc(problem) == "double" else 4)
            if loads > MAX_SPAN_LOADS or smem > arch.smem_per_block_default:
                return f"a warp's input span needs {loads} loads per lane and {smem} bytes of shared memory"
            return None
        return DesignSpace(
            [Token("block_x", (32, 64, 128), "threads along OW", (Role.THREADS,)),
             Token("block_y", (1, 2, 4, 8), "threads along OH", (Role.THREADS,)),
             Token("outputs", (1, 2, 4), "outputs per thread along OW, block_x apart", (Role.WORK,)),
             Token("layout", ("direct", "separable"),
                   "windows read per thread, or a warp's input columns read contiguously then folded",
                   ())],
            [threads_fit, span_fits])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        out_w = problem.output.shape[-1]
        block_x = 32 if out_w <= 32 else (64 if out_w <= 64 else 128)
        kw, sw = (_window(problem.anchor)[k][2] for k in ("kernel_size", "stride"))
        point = {"block_x": block_x, "block_y": max(1, min(8, 256 // block_x)), "outputs": 1,
                 "layout": "separable" if kw * sw >= SEPARABLE_FROM else "direct"}
        if not self.space(problem, arch).is_legal(point):
            point["layout"] = "direct"
        return point

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        anchor = problem.anchor
        assert anchor is not None
        block_x, block_y, outputs = point["block_x"], point["block_y"], point["outputs"]
        batch, channels = anchor.args[0].shape[:2]
        in_d, in_h, in_w = (1,) * (5 - anchor.rank) + tuple(anchor.args[0].shape[2:])
        out_d, out_h, out_w = (1,) * (5 - anchor.rank) + tuple(anchor.shape[2:])
        w = _window(anchor)
        (kd, kh, kw), (sd, sh, sw), (pd, ph, pw), (dd, dh, dw) = (
            w[k] for k in ("kernel_size", "stride", "padding", "dilation"))
        is_max = anchor.op.startswith("max")
        include_pad, ceil_mode = anchor.attr("count_include_pad", True), anchor.attr("ceil_mode", False)
        acc = _acc(problem)
        separable = point["layout"] == "separable"
        kernel = f"{name}_kernel"
        i6 = " " * 24
        code, (value,) = load_operand(problem, "in_plane + ((long long)in_d * kInH + in_row) * kInW + in_col",
                                      1, i6)
        if is_max:
            init = "-INFINITY"
            combine = "if (value > best || isnan(value)) best = value;   // NaN wins, as in torch"
            result = "best"
        else:
            init, combine = "Acc(0)", "best += value;"
            result = f"best / {_divisor(include_pad, ceil_mode)}"
        store = store_output(problem, "out_base + (long long)oh * kOutW + ow", [result], " " * 12)
        separable_consts = f"""// the input columns under a warp's 32 consecutive outputs
constexpr int kSpan = 31 * kStrideW + (kKernelW - 1) * kDilW + 1;
constexpr int kSpanLoads = (kSpan + 31) / 32;   // loads per lane covering them
constexpr int kWarps = kBlockX * kBlockY / 32;

// Folds one element (or a partial) into a running result.
__device__ __forceinline__ void fold(Acc& best, Acc value) {{
    {combine}
}}
"""
        separable_smem = "    __shared__ Acc columns[kWarps][kSpanLoads * 32];   // a row per warp\n"
        if separable:
            index_lines = ("    const int lane = threadIdx.x % 32;\n"
                           "    Acc* cols = columns[(threadIdx.y * kBlockX + threadIdx.x) / 32];\n"
                           "    const int warp_ow = blockIdx.x * (kBlockX * kOutputs) + threadIdx.x - lane;")
        else:
            index_lines = "    const int first_ow = blockIdx.x * (kBlockX * kOutputs) + threadIdx.x;"
        direct_body = f"""        #pragma unroll
        for (int o = 0; o < kOutputs; ++o) {{
            const int ow = first_ow + o * kBlockX;
            if (ow >= kOutW) continue;
            const int w0 = ow * kStrideW - kPadW;
            Acc best = {init};
            #pragma unroll
            for (int a = 0; a < kKernelD; ++a) {{
                const int in_d = d0 + a * kDilD;
                if (in_d < 0 || in_d >= kInD) continue;   // padding: skipped by max, zero in the avg sum
                #pragma unroll
                for (int i = 0; i < kKernelH; ++i) {{
                    const int in_row = h0 + i * kDilH;
                    if (in_row < 0 || in_row >= kInH) continue;
                    #pragma unroll
                    for (int j = 0; j < kKernelW; ++j) {{
                        const int in_col = w0 + j * kDilW;
                        if (in_col < 0 || in_col >= kInW) continue;
{code}{i6}const Acc value = (Acc)({value});
{i6}{combine}
                    }}
                }}
            }}
{store}        }}"""
        body = _separable_body(code, value, store, init) if separable else direct_body
        exit_note = "warp-uniform: a warp's threads share oh" if separable else "no barriers in this kernel"
        device = f"""using Acc = {acc};
constexpr int kKernelD = {kd}, kStrideD = {sd}, kPadD = {pd}, kDilD = {dd};   // depth (1 for 2-D pools)
constexpr int kKernelH = {kh}, kKernelW = {kw};
constexpr int kStrideH = {sh}, kStrideW = {sw};
constexpr int kPadH = {ph}, kPadW = {pw};
constexpr int kDilH = {dh}, kDilW = {dw};
constexpr int kInD = {in_d}, kInH = {in_h}, kInW = {in_w};
constexpr int kOutD = {out_d}, kOutH = {out_h}, kOutW = {out_w};
constexpr int kBlockX = {block_x};   // threads along OW
constexpr int kBlockY = {block_y};   // threads along OH
constexpr int kOutputs = {outputs};   // outputs per thread, kBlockX apart along OW
{separable_consts if separable else ""}
// Block (x, y, z): output columns [x * kBlockX * kOutputs, +kBlockX * kOutputs) of rows
// [y * kBlockY, +kBlockY), for (plane, output depth) slices z, z + gridDim.z, ...
__global__ void __launch_bounds__(kBlockX * kBlockY)
{kernel}({kernel_params(problem)}) {{
{separable_smem if separable else ""}    const long long slices = {_c(batch)} * {_c(channels)} * kOutD;
    const int oh = blockIdx.y * kBlockY + threadIdx.y;
    if (oh >= kOutH) return;   // {exit_note}
    const int h0 = oh * kStrideH - kPadH;
{index_lines}
    for (long long slice = blockIdx.z; slice < slices; slice += gridDim.z) {{
        const long long plane = slice / kOutD;
        const int d0 = (int)(slice % kOutD) * kStrideD - kPadD;
        const long long in_plane = plane * kInD * kInH * kInW;
        const long long out_base = slice * kOutH * kOutW;
{body}
    }}
}}"""
        params = launcher_params(problem)
        launcher = f"""{launcher_signature(name, params)} {{
    using namespace dice_{name};
    const long long slices = {_c(batch)} * {_c(channels)} * kOutD;
    if (slices == 0) return;
    const dim3 grid((kOutW + kBlockX * kOutputs - 1) / (kBlockX * kOutputs), (kOutH + kBlockY - 1) / kBlockY,
                    (unsigned)(slices < 65535 ? slices : 65535));   // the kernel loops over further slices
    {kernel}<<<grid, dim3(kBlockX, kBlockY), 0, stream>>>({kernel_args(problem)});
}}"""
        kind = "max" if is_max else ("average (count_include_pad)" if include_pad else "average")
        window = "x".join(map(str, (kd, kh, kw)[3 - POOLED[anchor.op]:]))
        strides = "x".join(map(str, (sd, sh, sw)[3 - POOLED[anchor.op]:]))
        pads = "x".join(map(str, (pd, ph, pw)[3 - POOLED[anchor.op]:]))
        strategy = (f"direct {kind} pooling {window}/{strides} pad {pads}, {block_x}x{block_y} threads, "
                    f"{outputs} output(s) per thread along OW (coalesced){fusion_note(problem)}")
        source = frame(name=name, strategy=strategy, tokens=dict(point), device_code=device,
                       launcher_code=launcher)
        slices = math.prod(problem.program.concrete_shape((batch, channels), HINT)) * out_d
        grid = (-(-out_w // (block_x * outputs)), -(-out_h // block_y), max(1, min(slices, 65535)))
        launch = Launch(kernel, grid, (block_x, block_y, 1), 0)
        return RenderedKernel(self.name, dict(point), source, [f"dice_{name}::{kernel}"], launcher, params,
                              [launch], f"direct {anchor.op} {window}, {block_x}x{block_y}x{outputs}")


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
    "y = max_pool3d(x, kernel_size=3, stride=2, padding=1, dilation=3); x: f32[4, 8, 32, 32, 32]",
    "y = avg_pool3d(x, kernel_size=3, stride=2, padding=1); x: f32[4, 8, 32, 32, 64]",
    "y = avg_pool2d(x, kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False); "
    "x: f32[2, 4, 17, 17]",
]
