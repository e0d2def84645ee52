"""Depthwise convolution as a direct stencil: `conv.depthwise` serves conv1d/conv2d with one
input channel per group (output channel c reads input channel c / multiplier), any stride,
padding and dilation, bias and a fused elementwise epilogue.

A block computes a (threads_h*rows) x (32*cols) output tile of one (image, channel) plane. Its
input window (tile plus halo) is read from global memory once, coalesced along W, into shared
memory; the channel's taps sit in registers. Each thread accumulates `rows` consecutive output
rows times `cols` columns (32 apart: stores stay coalesced); every shared-memory value it loads
serves all the kernel rows that touch it (the unrolled loops resolve which at compile time).
f32 in f32, f64 in f64, f16/bf16 accumulated in f32.
"""
from __future__ import annotations

from ..arch import ArchSpec
from ..ir.patterns import Problem
from .base import (DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, dim_c, frame,
                   launcher_params, launcher_signature, load_as_compute)
from .conv import acc_bytes, acc_type
from .conv_geometry import ConvGeometry, depthwise_direct
from .fusion import fusion_note, fusion_unsupported, kernel_args, kernel_params, store_output

WARP = 32
MAX_TILE_DIM = 65535   # grid y and z carry the tiles along W and H


def _input_tile(geo: ConvGeometry, point: Point) -> tuple[int, int]:
    """Rows and columns of the shared input window of one output tile."""
    (_, sh, sw), (_, dh, dw), (_, kh, kw) = geo.stride, geo.dilation, geo.kernel
    rows = (point["threads_h"] * point["rows"] - 1) * sh + (kh - 1) * dh + 1
    cols = (WARP * point["cols"] - 1) * sw + (kw - 1) * dw + 1
    return rows, cols


def _tiles(geo: ConvGeometry, point: Point) -> tuple[int, int]:
    """Output tiles along W and along H."""
    tile_h = point["threads_h"] * point["rows"]
    return -(-geo.out_size[2] // (WARP * point["cols"])), -(-geo.out_size[1] // tile_h)


class DepthwiseConv(Sketch):
    name = "conv.depthwise"
    pattern = "conv"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        anchor = problem.anchor
        if anchor is None or not anchor.op.startswith("conv"):
            return "conv.depthwise serves convolutions"
        if any(a.op != "input" for a in anchor.args):
            return "convolution operands must be input tensors (a fused prologue is not supported)"
        if not depthwise_direct(ConvGeometry(problem)):
            return "conv.depthwise serves 1-D/2-D forward convolutions with one input channel per group"
        return fusion_unsupported(problem, operands=())

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        geo = ConvGeometry(problem)
        element_bytes = acc_bytes(problem)

        def smem_fits(p: Point) -> str | None:
            rows, cols = _input_tile(geo, p)
            need = rows * cols * element_bytes
            fits = need <= arch.smem_per_block_default
            return None if fits else f"input window needs {need} B of shared memory"

        def grid_fits(p: Point) -> str | None:
            fits = max(_tiles(geo, p)) <= MAX_TILE_DIM
            return None if fits else "more output tiles than a grid dimension holds"

        def registers_fit(p: Point) -> str | None:
            regs = (p["rows"] * p["cols"] + geo.kernel_volume) * element_bytes // 4
            return None if regs <= 96 else f"{regs} registers of accumulators and taps per thread (max 96)"

        return DesignSpace(
            [Token("threads_h", (2, 4, 8, 16), "thread rows per block (32 threads each along W)",
                   (Role.THREADS,)),
             Token("rows", (1, 2, 4, 8), "consecutive output rows per thread (register blocking along H)",
                   (Role.WORK,)),
             Token("cols", (1, 2, 4), "output columns per thread, 32 apart", (Role.WORK,))],
            [smem_fits, grid_fits, registers_fit])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        geo = ConvGeometry(problem)
        space = self.space(problem, arch)
        out_h, out_w = geo.out_size[1], geo.out_size[2]
        rows = 4 if out_h >= 32 else 2 if out_h >= 8 else 1
        cols = 2 if out_w >= 128 else 1
        threads_h = 8 if out_h >= 16 else 2   # a 1-D convolution has one output row
        return space.first_legal([{"threads_h": threads_h, "rows": rows, "cols": cols},
                                  {"threads_h": 8, "rows": 1, "cols": 1},
                                  {"threads_h": 2, "rows": 1, "cols": 1}])

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        geo = ConvGeometry(problem)
        anchor = problem.anchor
        x, w = anchor.args[0], anchor.args[1]
        th, rows, cols = point["threads_h"], point["rows"], point["cols"]
        tile_rows, tile_cols = _input_tile(geo, point)
        (_, in_h, in_w), (_, out_h, out_w), (_, kh, kw) = geo.in_size, geo.out_size, geo.kernel
        (_, sh, sw), (_, ph, pw), (_, dh, dw) = geo.stride, geo.padding, geo.dilation
        kernel = f"{name}_kernel"
        value = "acc[r][c]"
        if geo.has_bias:
            bias = anchor.args[2]
            value = f"acc[r][c] + (Acc)({load_as_compute(bias.dtype, f'{bias.name}[channel]')})"
        store = store_output(problem, "out_offset", [value], " " * 16)
        x_value = load_as_compute(x.dtype, f"{x.name}[plane_in + (long long)ih * kInW + iw]")
        w_value = load_as_compute(w.dtype, f"{w.name}[channel * kTaps + t]")
        device = f"""using Acc = {acc_type(problem)};
constexpr int kThreadsW = {WARP}, kThreadsH = {th};
constexpr int kThreads = kThreadsW * kThreadsH;
constexpr int kRows = {rows};   // consecutive output rows per thread
constexpr int kCols = {cols};   // output columns per thread, kThreadsW apart
constexpr int kTileH = kThreadsH * kRows, kTileW = kThreadsW * kCols;   // output tile
constexpr int kInH = {in_h}, kInW = {in_w}, kOutH = {out_h}, kOutW = {out_w};
constexpr int kKernelH = {kh}, kKernelW = {kw}, kTaps = kKernelH * kKernelW;
constexpr int kStrideH = {sh}, kStrideW = {sw}, kPadH = {ph}, kPadW = {pw};
constexpr int kDilationH = {dh}, kDilationW = {dw};
constexpr int kChannels = {geo.out_channels};
constexpr int kMultiplier = {geo.out_channels_g};   // output channels per input channel
constexpr int kWindowH = {tile_rows}, kWindowW = {tile_cols};   // input rows/columns of one tile
constexpr int kThreadRowsIn = (kRows - 1) * kStrideH + (kKernelH - 1) * kDilationH + 1;

__global__ void __launch_bounds__(kThreads)
{kernel}({kernel_params(problem)}) {{
    __shared__ Acc window[kWindowH][kWindowW];
    const long long plane = blockIdx.x;              // image * kChannels + channel
    const int channel = (int)(plane % kChannels);
    const long long image = plane / kChannels;
    const int ow0 = blockIdx.y * kTileW, oh0 = blockIdx.z * kTileH;
    const int tid = threadIdx.x;
    const int tx = tid % kThreadsW, ty = tid / kThreadsW;

    // The window, read once and coalesced along W; zeros in the padding.
    const long long plane_in = (image * (kChannels / kMultiplier) + channel / kMultiplier) * kInH * kInW;
    const int ih0 = oh0 * kStrideH - kPadH, iw0 = ow0 * kStrideW - kPadW;
    for (int e = tid; e < kWindowH * kWindowW; e += kThreads) {{
        const int ih = ih0 + e / kWindowW, iw = iw0 + e % kWindowW;
        const bool inside = ih >= 0 && ih < kInH && iw >= 0 && iw < kInW;
        window[e / kWindowW][e % kWindowW] = inside ? Acc({x_value}) : Acc(0);
    }}
    Acc taps[kTaps];   // this channel's kernel, w[channel][0][kh][kw]
    #pragma unroll
    for (int t = 0; t < kTaps; ++t) taps[t] = Acc({w_value});
    __syncthreads();

    // Window row `in_row` (relative to this thread's first) feeds output row r through kernel
    // row (in_row - r * stride) / dilation when that is a whole row of the kernel: all of it
    // known after unrolling, so each loaded value is read from shared memory once.
    Acc acc[kRows][kCols] = {{}};
    #pragma unroll
    for (int in_row = 0; in_row < kThreadRowsIn; ++in_row) {{
        #pragma unroll
        for (int c = 0; c < kCols; ++c) {{
            #pragma unroll
            for (int k_w = 0; k_w < kKernelW; ++k_w) {{
                const Acc v = window[ty * kRows * kStrideH + in_row][(tx + c * kThreadsW) * kStrideW
                                                                     + k_w * kDilationW];
                #pragma unroll
                for (int r = 0; r < kRows; ++r) {{
                    const int offset = in_row - r * kStrideH;
                    if (offset >= 0 && offset % kDilationH == 0 && offset / kDilationH < kKernelH)
                        acc[r][c] += taps[offset / kDilationH * kKernelW + k_w] * v;
                }}
            }}
        }}
    }}

    #pragma unroll
    for (int r = 0; r < kRows; ++r) {{
        const int oh = oh0 + ty * kRows + r;
        #pragma unroll
        for (int c = 0; c < kCols; ++c) {{
            const int ow = ow0 + tx + c * kThreadsW;
            if (oh < kOutH && ow < kOutW) {{
                const long long out_offset = (plane * kOutH + oh) * kOutW + ow;
{store}            }}
        }}
    }}
}}"""
        tiles_w, tiles_h = _tiles(geo, point)
        launcher = f"""{launcher_signature(name, launcher_params(problem))} {{
    using namespace dice_{name};
    const long long planes = (long long){dim_c(geo.batch)} * kChannels;
    if (planes == 0) return;
    const dim3 grid((unsigned)planes, {tiles_w}, {tiles_h});
    {kernel}<<<grid, kThreads, 0, stream>>>({kernel_args(problem)});
}}"""
        precision = {"f64": "f64", "f32": "f32"}.get(anchor.dtype.name,
                                                     f"{anchor.dtype} inputs, f32 accumulate")
        strategy = (f"depthwise {anchor.op} as a direct stencil: a block per {th * rows}x{WARP * cols} "
                    f"output tile of one channel, its {tile_rows}x{tile_cols} input window read once into "
                    f"shared memory, taps in registers, {rows}x{cols} outputs per thread "
                    f"(rows reuse each loaded value); "
                    f"{precision}; {geo.features()}{fusion_note(problem)}")
        source = frame(name=name, strategy=strategy, tokens=dict(point), device_code=device,
                       launcher_code=launcher)
        element_bytes = acc_bytes(problem)
        grid = (geo.batch_hint * geo.out_channels, tiles_w, tiles_h)
        launch = Launch(kernel, grid, (WARP * th, 1, 1), tile_rows * tile_cols * element_bytes)
        return RenderedKernel(self.name, dict(point), source, [f"dice_{name}::{kernel}"], launcher,
                              launcher_params(problem), [launch],
                              f"depthwise stencil, {th * rows}x{WARP * cols} tile, {rows}x{cols} per thread")


SKETCHES: list[Sketch] = [DepthwiseConv()]

SAMPLE_INTENTS: list[str] = [
    "y = conv2d(x, w, padding=1, groups=64); x: f32[16, 64, 128, 128]; w: f32[64, 1, 3, 3]",
    "y = relu(conv2d(x, w, b, stride=2, padding=(1, 3), groups=32)); x: f32[4, 32, 57, 63]; "
    "w: f32[64, 1, 3, 7]; b: f32[64]",
    "y = conv1d(x, w, padding=2, dilation=2, groups=16); x: f16[8, 16, 500]; w: f16[16, 1, 5]",
]
