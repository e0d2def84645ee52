"""conv2d over NCHW as an implicit GEMM: `conv.implicit_gemm` (SIMT, every float dtype) and
`conv.implicit_gemm_wmma` (tensor cores, f16/bf16, sm_80+).

GEMM view: M = N*OH*OW output pixels, N = K output channels, K = C*R*S taps. A[m][k] is the
input pixel that tap k of output pixel m reads (zero in the padding), gathered on the fly
(im2col never materialised); B[k][n] = w[n][k], the weights as stored. Each block computes a
block_m x block_n output tile stepping block_k taps at a time through shared memory, each
thread a thread_m x thread_n register tile. The next step's tiles are fetched into registers
while the current one is multiplied (one shared buffer, two barriers per step).

In `conv.implicit_gemm` arithmetic is SIMT: f32 in f32, f64 in f64, f16/bf16 converted to f32
on the way into shared memory and accumulated in f32. `conv.implicit_gemm_wmma` keeps f16/bf16
tiles in shared memory and multiplies them with WMMA 16x16x16 fragments accumulating in f32; the
results pass through shared memory so the stores run along OW. Both support stride, padding,
dilation and bias, and fuse an elementwise epilogue (e.g. relu) into the store.
"""
from __future__ import annotations

import math
from collections.abc import Callable

from ..arch import ArchSpec
from ..ir.patterns import Problem
from .base import (INCLUDES, DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, dim_c, frame,
                  launcher_params, launcher_signature, load_as_compute)
from .fusion import (PACK, fusion_note, fusion_unsupported, kernel_args, kernel_params, store_output)

HINT = 64   # batch assumed for an unbound batch symbol when sizing launches


# The implicit-GEMM main loop both convolution sketches share: the block's im2col tile (a_tile) and
# weight tile (b_tile) staged by `fetch` (global loads into registers, in flight while the current
# step multiplies) and `stash` (registers into shared memory), each thread accumulating a
# kThreadM × kThreadN register tile.
MAIN_LOOP = """    Acc acc[kThreadM][kThreadN] = {};

    fetch(0);
    stash();
    __syncthreads();
    // The loop bound is block-uniform, so every thread reaches every barrier.
    for (int k0 = 0; k0 < gemm_k; k0 += kBlockK) {
        const bool has_next = k0 + kBlockK < gemm_k;
        if (has_next) fetch(k0 + kBlockK);   // in flight while this step multiplies
        #pragma unroll
        for (int kk = 0; kk < kBlockK; ++kk) {
            Acc a_frag[kThreadM];
            Acc b_frag[kThreadN];
            #pragma unroll
            for (int i = 0; i < kThreadM; ++i) a_frag[i] = a_tile[kk][tx + i * kThreadsM];
            #pragma unroll
            for (int j = 0; j < kThreadN; j += kBVec) {
                const Pack<Acc, kBVec> pack =
                    *reinterpret_cast<const Pack<Acc, kBVec>*>(&b_tile[kk][ty * kThreadN + j]);
                #pragma unroll
                for (int q = 0; q < kBVec; ++q) b_frag[j + q] = pack.v[q];
            }
            #pragma unroll
            for (int i = 0; i < kThreadM; ++i) {
                #pragma unroll
                for (int j = 0; j < kThreadN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
            }
        }
        __syncthreads();   // everyone is done reading this step's tiles
        if (has_next) {
            stash();
            __syncthreads();
        }
    }

"""


def acc_type(problem: Problem) -> str:
    return "double" if problem.anchor.dtype.name == "f64" else "float"


def acc_bytes(problem: Problem) -> int:
    return 8 if acc_type(problem) == "double" else 4


def tile_constraints(problem: Problem, arch: ArchSpec) -> list[Callable[[Point], str | None]]:
    """The block/register tiling limits both implicit-GEMM convolution sketches share: threads per
    block, loaders that split the tiles evenly, shared memory for the two tiles, accumulators."""
    acc = acc_bytes(problem)

    def threads(p: Point) -> int:
        return (p["block_m"] // p["thread_m"]) * (p["block_n"] // p["thread_n"])

    def threads_fit(p: Point) -> str | None:
        t = threads(p)
        if not 64 <= t <= min(512, arch.max_threads_per_block) or t % 32:
            return f"{t} threads per block (want a multiple of 32 in 64..512)"
        return None

    def loaders_fit(p: Point) -> str | None:
        return tiles_split_evenly(threads(p), p["block_m"], p["block_n"], p["block_k"])

    def smem_fits(p: Point) -> str | None:
        need = p["block_k"] * (p["block_m"] + p["block_n"] + 4) * acc
        return None if need <= arch.smem_per_block_default else f"tiles need {need} B of shared memory"

    def registers_fit(p: Point) -> str | None:
        acc_regs = p["thread_m"] * p["thread_n"] * acc // 4
        return None if acc_regs <= 64 else f"{acc_regs} accumulator registers per thread (max 64)"

    return [threads_fit, loaders_fit, smem_fits, registers_fit]


class ConvShape:
    """The convolution's extents (symbols stay names) and the GEMM sizes at hint values."""

    def __init__(self, problem: Problem):
        anchor = problem.anchor
        assert anchor is not None
        x, w = anchor.args[0], anchor.args[1]
        self.batch, self.channels, self.in_h, self.in_w = x.shape
        self.out_channels, _, self.kernel_h, self.kernel_w = w.shape
        self.out_h, self.out_w = anchor.shape[2], anchor.shape[3]
        self.stride = anchor.attr("stride")
        self.padding = anchor.attr("padding")
        self.dilation = anchor.attr("dilation")
        self.has_bias = len(anchor.args) == 3
        program = problem.program
        batch, channels, out_channels = program.concrete_shape((self.batch, self.channels, self.out_channels),
                                                                HINT)
        self.gemm_m = batch * self.out_h * self.out_w
        self.gemm_n = out_channels
        self.gemm_k = channels * self.kernel_h * self.kernel_w


def tiles_split_evenly(threads: int, block_m: int, block_n: int, block_k: int) -> str | None:
    """Whether the loaders below tile the A and B block tiles evenly."""
    # A: a thread keeps one output pixel (tid % block_m) and strides over taps.
    if threads % block_m or block_k % (threads // block_m):
        return f"{threads} threads cannot split a {block_k}x{block_m} input tile evenly"
    # B: a thread keeps one tap (tid % block_k) and strides over output channels.
    if threads % block_k or block_n % (threads // block_k):
        return f"{threads} threads cannot split a {block_k}x{block_n} weight tile evenly"
    return None


def _geometry(shape: ConvShape) -> str:
    (sh, sw), (ph, pw), (dh, dw) = shape.stride, shape.padding, shape.dilation
    return f"""constexpr int kInH = {shape.in_h}, kInW = {shape.in_w};
constexpr int kOutH = {shape.out_h}, kOutW = {shape.out_w};
constexpr int kKernelH = {shape.kernel_h}, kKernelW = {shape.kernel_w};
constexpr int kStrideH = {sh}, kStrideW = {sw};
constexpr int kPadH = {ph}, kPadW = {pw};
constexpr int kDilationH = {dh}, kDilationW = {dw};
"""


def _loaders(problem: Problem, stage: str, zero: str, b_slot: str) -> str:
    """Kernel-body code shared by both conv sketches: extents, block origin, and the A (im2col
    gather) and B (weights) loaders as `fetch(k0)` (global -> `stage` registers, zero outside
    the tensors) and `stash()` (registers -> a_tile[tap][pixel] and `b_slot`)."""
    shape = ConvShape(problem)
    x, w = problem.anchor.args[0], problem.anchor.args[1]
    a_value = load_as_compute(x.dtype, "a_src[((long long)in_c * kInH + in_h) * kInW + in_w]")
    b_value = load_as_compute(w.dtype, f"{w.name}[(long long)channel * gemm_k + tap]")
    if stage != "Acc":   # tensor cores: stage the raw elements
        a_value = "a_src[((long long)in_c * kInH + in_h) * kInW + in_w]"
        b_value = f"{w.name}[(long long)channel * gemm_k + tap]"
    return f"""    const long long batch = {dim_c(shape.batch)};
    const int channels = {dim_c(shape.channels)};
    const int out_channels = {dim_c(shape.out_channels)};
    const long long gemm_m = batch * kOutH * kOutW;
    const int gemm_k = channels * kKernelH * kKernelW;
    const long long m0 = (long long)blockIdx.x * kBlockM;
    const int n0 = blockIdx.y * kBlockN;
    const int tid = threadIdx.x;

    // The A loader: this thread's output pixel (fixed over the whole K loop) and its window.
    const int a_pixel = tid % kBlockM;
    const int a_tap = tid / kBlockM;                        // first tap row; kThreads / kBlockM apart
    const long long a_m = m0 + a_pixel;
    const bool a_valid = a_m < gemm_m;
    const long long a_image = a_valid ? a_m / (kOutH * kOutW) : 0;
    const int a_spatial = (int)(a_m % (kOutH * kOutW));
    const int a_h0 = a_spatial / kOutW * kStrideH - kPadH;
    const int a_w0 = a_spatial % kOutW * kStrideW - kPadW;
    const {x.dtype.c_type}* a_src = {x.name} + a_image * channels * kInH * kInW;
    // The B loader: this thread's tap (fixed) and first output channel.
    const int b_tap = tid % kBlockK;
    const int b_channel = tid / kBlockK;                    // kThreads / kBlockK apart

    {stage} a_stage[kALoads];
    {stage} b_stage[kBLoads];
    auto fetch = [&](int k0) {{   // global -> registers, zeros outside the tensors
        #pragma unroll
        for (int l = 0; l < kALoads; ++l) {{
            const int tap = k0 + a_tap + l * (kThreads / kBlockM);   // tap = (c * R + r) * S + s
            const int in_c = tap / (kKernelH * kKernelW);
            const int tap_r = tap / kKernelW % kKernelH;
            const int tap_s = tap % kKernelW;
            const int in_h = a_h0 + tap_r * kDilationH;
            const int in_w = a_w0 + tap_s * kDilationW;
            const bool inside = a_valid && tap < gemm_k
                                && in_h >= 0 && in_h < kInH && in_w >= 0 && in_w < kInW;   // else padding
            a_stage[l] = inside ? {stage}({a_value}) : {zero};
        }}
        #pragma unroll
        for (int l = 0; l < kBLoads; ++l) {{
            const int channel = n0 + b_channel + l * (kThreads / kBlockK);
            const int tap = k0 + b_tap;
            const bool inside = channel < out_channels && tap < gemm_k;
            b_stage[l] = inside ? {stage}({b_value}) : {zero};   // w[channel][c][r][s]
        }}
    }};
    auto stash = [&]() {{   // registers -> shared memory
        #pragma unroll
        for (int l = 0; l < kALoads; ++l) a_tile[a_tap + l * (kThreads / kBlockM)][a_pixel] = a_stage[l];
        #pragma unroll
        for (int l = 0; l < kBLoads; ++l) {b_slot} = b_stage[l];
    }};
"""


def _launcher(problem: Problem, name: str, kernel: str) -> str:
    shape = ConvShape(problem)
    return f"""{launcher_signature(name, launcher_params(problem))} {{
    using namespace dice_{name};
    const long long gemm_m = (long long){dim_c(shape.batch)} * kOutH * kOutW;
    const long long out_channels = {dim_c(shape.out_channels)};
    if (gemm_m == 0 || out_channels == 0) return;
    const dim3 grid((unsigned)((gemm_m + kBlockM - 1) / kBlockM),
                    (unsigned)((out_channels + kBlockN - 1) / kBlockN));
    {kernel}<<<grid, kThreads, 0, stream>>>({kernel_args(problem)});
}}"""


def _features(shape: ConvShape) -> str:
    (sh, sw), (ph, pw), (dh, dw) = shape.stride, shape.padding, shape.dilation
    features = [f"stride {sh}x{sw}", f"padding {ph}x{pw}", f"dilation {dh}x{dw}"]
    return ", ".join(features + ["bias"] * shape.has_bias)


class ImplicitGemmConv(Sketch):
    name = "conv.implicit_gemm"
    pattern = "conv2d"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        anchor = problem.anchor
        if anchor is None or anchor.op != "conv2d":
            return "conv.implicit_gemm serves conv2d"
        if any(a.op != "input" for a in anchor.args):
            return "conv2d operands must be input tensors (a fused prologue is not supported)"
        return fusion_unsupported(problem, operands=())

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        return DesignSpace(
            [Token("block_m", (32, 64, 128), "output pixels per block tile", (Role.TILE,)),
             Token("block_n", (32, 64, 128), "output channels per block tile", (Role.TILE,)),
             Token("block_k", (8, 16), "taps (c, r, s) per shared-memory step", (Role.TILE,)),
             Token("thread_m", (2, 4, 8), "output pixels per thread (strided: coalesced stores)",
                   (Role.WORK,)),
             Token("thread_n", (2, 4, 8), "output channels per thread (contiguous: vector smem reads)",
                   (Role.WORK,))],
            tile_constraints(problem, arch))

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        shape = ConvShape(problem)
        space = self.space(problem, arch)
        if acc_type(problem) == "double":
            point = {"block_m": 64, "block_n": 64, "block_k": 8, "thread_m": 4, "thread_n": 4}
        else:
            block_n = 128 if shape.gemm_n >= 128 else (64 if shape.gemm_n >= 64 else 32)
            # Big tiles reuse each loaded element most, as long as they still fill every SM.
            tiles_128 = -(-shape.gemm_m // 128) * -(-shape.gemm_n // block_n)
            block_m = 128 if tiles_128 >= 2 * arch.sms else 64
            point = {"block_m": block_m, "block_n": block_n, "block_k": 8,
                     "thread_m": 8 if block_m == 128 else 4, "thread_n": {128: 8, 64: 4, 32: 2}[block_n]}
        return space.first_legal([point])

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        shape = ConvShape(problem)
        anchor = problem.anchor
        bm, bn, bk, tm, tn = (point[k] for k in ("block_m", "block_n", "block_k", "thread_m", "thread_n"))
        threads = (bm // tm) * (bn // tn)
        acc = acc_type(problem)
        b_vec = math.gcd(tn, 16 // acc_bytes(problem))
        kernel = f"{name}_kernel"
        value = "acc[i][j]"
        if shape.has_bias:
            bias = anchor.args[2]
            value = f"acc[i][j] + (Acc)({load_as_compute(bias.dtype, f'{bias.name}[out_channel]')})"
        store = store_output(problem, "out_offset", [value], " " * 16)

        device = f"""{PACK}

using Acc = {acc};
constexpr int kBlockM = {bm};    // output pixels per block
constexpr int kBlockN = {bn};    // output channels per block
constexpr int kBlockK = {bk};    // taps per step
constexpr int kThreadM = {tm};   // pixels per thread, kBlockM / kThreadM apart
constexpr int kThreadN = {tn};   // channels per thread, contiguous
constexpr int kThreadsM = kBlockM / kThreadM;
constexpr int kThreads = kThreadsM * (kBlockN / kThreadN);
constexpr int kALoads = kBlockK * kBlockM / kThreads;   // input elements a thread stages per step
constexpr int kBLoads = kBlockK * kBlockN / kThreads;   // weights a thread stages per step
constexpr int kBVec = {b_vec};     // weights per shared-memory vector read
// +4: the transposing weight stores spread over banks while rows stay 16-byte aligned.
constexpr int kBPitch = kBlockN + 4;

{_geometry(shape)}
__global__ void __launch_bounds__(kThreads)
{kernel}({kernel_params(problem)}) {{
    __shared__ Acc a_tile[kBlockK][kBlockM];   // [tap][pixel]
    __shared__ __align__(16) Acc b_tile[kBlockK][kBPitch];   // [tap][channel]

{_loaders(problem, "Acc", "Acc(0)", "b_tile[b_tap][b_channel + l * (kThreads / kBlockK)]")}
    const int tx = tid % kThreadsM;   // pixels tx, tx + kThreadsM, ...
    const int ty = tid / kThreadsM;   // channels ty * kThreadN ... + kThreadN - 1
{MAIN_LOOP}    // Epilogue: consecutive threads hold consecutive pixels, so stores run along OW.
    #pragma unroll
    for (int i = 0; i < kThreadM; ++i) {{
        const long long pixel = m0 + tx + i * kThreadsM;
        if (pixel >= gemm_m) continue;
        const long long image = pixel / (kOutH * kOutW);
        const int spatial = (int)(pixel % (kOutH * kOutW));
        #pragma unroll
        for (int j = 0; j < kThreadN; ++j) {{
            const int out_channel = n0 + ty * kThreadN + j;
            if (out_channel < out_channels) {{
                const long long out_offset = (image * out_channels + out_channel) * (kOutH * kOutW) + spatial;
{store}            }}
        }}
    }}
}}"""
        params = launcher_params(problem)
        launcher = _launcher(problem, name, kernel)
        precision = {"f64": "f64 SIMT", "f32": "f32 SIMT"}.get(
            anchor.dtype.name, f"{anchor.dtype} inputs, SIMT f32 accumulate (no tensor cores)")
        strategy = (f"conv2d as implicit GEMM (M=N*OH*OW, N=K, K=C*R*S), {bm}x{bn}x{bk} block tiles through "
                    f"shared memory, {tm}x{tn} register tile per thread, register prefetch of the next step; "
                    f"{precision}; {_features(shape)}{fusion_note(problem)}")
        source = frame(name=name, strategy=strategy, tokens=dict(point), device_code=device,
                       launcher_code=launcher)
        grid = (max(1, -(-shape.gemm_m // bm)), max(1, -(-shape.gemm_n // bn)), 1)
        launch = Launch(kernel, grid, (threads, 1, 1), bk * (bm + bn + 4) * acc_bytes(problem))
        return RenderedKernel(self.name, dict(point), source, [f"dice_{name}::{kernel}"], launcher, params,
                              [launch], f"implicit GEMM {bm}x{bn}x{bk}, thread tile {tm}x{tn}")


class TensorCoreConv(Sketch):
    """f16/bf16 implicit GEMM on tensor cores (WMMA 16x16x16, f32 accumulate)."""
    name = "conv.implicit_gemm_wmma"
    pattern = "conv2d"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        anchor = problem.anchor
        if anchor is None or anchor.op != "conv2d":
            return "conv.implicit_gemm_wmma serves conv2d"
        if anchor.dtype.name not in ("f16", "bf16"):
            return "tensor-core conv needs f16 or bf16 operands"
        if arch.sm_number < 80:
            return f"WMMA with {anchor.dtype} here targets sm_80 and newer"
        if any(a.op != "input" for a in anchor.args):
            return "conv2d operands must be input tensors (a fused prologue is not supported)"
        return fusion_unsupported(problem, operands=())

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        def threads(p: Point) -> int:
            return 32 * p["warps_m"] * p["warps_n"]

        def warps_fit(p: Point) -> str | None:
            if p["block_m"] % (16 * p["warps_m"]) or p["block_n"] % (16 * p["warps_n"]):
                return "each warp needs whole 16x16 fragments of the block tile"
            if not 64 <= threads(p) <= 512:
                return f"{threads(p)} threads per block (want 64..512)"
            fragments = p["block_m"] // (16 * p["warps_m"]) * (p["block_n"] // (16 * p["warps_n"]))
            return None if fragments <= 8 else f"{fragments} accumulator fragments per warp (max 8)"

        def loaders_fit(p: Point) -> str | None:
            return tiles_split_evenly(threads(p), p["block_m"], p["block_n"], p["block_k"])

        def smem_fits(p: Point) -> str | None:
            need = _wmma_smem_bytes(p["block_m"], p["block_n"], p["block_k"])
            return None if need <= arch.smem_per_block_default else f"tiles need {need} B of shared memory"

        return DesignSpace(
            [Token("block_m", (32, 64, 128), "output pixels per block tile", (Role.TILE,)),
             Token("block_n", (32, 64, 128), "output channels per block tile", (Role.TILE,)),
             Token("block_k", (16, 32), "taps per shared-memory step (one or two 16-deep MMAs)",
                   (Role.TILE,)),
             Token("warps_m", (1, 2, 4), "warps along the pixels", (Role.THREADS,)),
             Token("warps_n", (1, 2, 4), "warps along the output channels", (Role.THREADS,))],
            [warps_fit, loaders_fit, smem_fits])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        shape = ConvShape(problem)
        # block_k 16 keeps the staged elements (one register each) few enough for 3+ blocks per SM.
        if shape.gemm_n >= 128:
            point = {"block_m": 64, "block_n": 128, "block_k": 16, "warps_m": 2, "warps_n": 2}
        else:
            point = {"block_m": 128, "block_n": 64 if shape.gemm_n >= 64 else 32, "block_k": 16,
                     "warps_m": 4, "warps_n": 1}
        space = self.space(problem, arch)
        return space.first_legal([point])

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        shape = ConvShape(problem)
        anchor = problem.anchor
        bm, bn, bk, wm, wn = (point[k] for k in ("block_m", "block_n", "block_k", "warps_m", "warps_n"))
        element = anchor.dtype.c_type
        kernel = f"{name}_kernel"
        value = "c_tile[n_local][m_local]"
        if shape.has_bias:
            bias = anchor.args[2]
            value += f" + (float)({load_as_compute(bias.dtype, f'{bias.name}[out_channel]')})"
        store = store_output(problem, "out_offset", [value], " " * 12)
        zero = "__float2half_rn(0.0f)" if anchor.dtype.name == "f16" else "__float2bfloat16_rn(0.0f)"
        device = f"""using namespace nvcuda;
using Element = {element};
constexpr int kBlockM = {bm};    // output pixels per block
constexpr int kBlockN = {bn};    // output channels per block
constexpr int kBlockK = {bk};    // taps per step
constexpr int kWarpsM = {wm}, kWarpsN = {wn};
constexpr int kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kWarpTileM = kBlockM / kWarpsM, kWarpTileN = kBlockN / kWarpsN;
constexpr int kFragsM = kWarpTileM / 16, kFragsN = kWarpTileN / 16;   // 16x16 accumulators per warp
constexpr int kALoads = kBlockK * kBlockM / kThreads;
constexpr int kBLoads = kBlockK * kBlockN / kThreads;
// Shared tiles, padded against bank conflicts (WMMA wants ldm % 8 == 0 and 32-byte aligned rows):
// A as [tap][pixel] (a column-major 16x16 A fragment), B as [channel][tap] (column-major B),
// and after the K loop the f32 results as [channel][pixel] over the same bytes.
constexpr int kLdA = kBlockM + 8, kLdB = kBlockK + 8, kLdC = kBlockM + 4;
constexpr int kABytes = kBlockK * kLdA * 2, kBBytes = kBlockN * kLdB * 2, kCBytes = kBlockN * kLdC * 4;
constexpr int kSmemBytes = kABytes + kBBytes > kCBytes ? kABytes + kBBytes : kCBytes;

{_geometry(shape)}
// Min 1 block per SM: lets ptxas keep fragments and staged elements in registers (no spills).
__global__ void __launch_bounds__(kThreads, 1)
{kernel}({kernel_params(problem)}) {{
    __shared__ __align__(128) unsigned char smem[kSmemBytes];
    auto a_tile = reinterpret_cast<Element (*)[kLdA]>(smem);
    auto b_tile = reinterpret_cast<Element (*)[kLdB]>(smem + kABytes);
    auto c_tile = reinterpret_cast<float (*)[kLdC]>(smem);

{_loaders(problem, "Element", zero, "b_tile[b_channel + l * (kThreads / kBlockK)][b_tap]")}
    const int warp = tid / 32;
    const int warp_m = warp % kWarpsM * kWarpTileM;   // the warp's first pixel in the block tile
    const int warp_n = warp / kWarpsM * kWarpTileN;   // its first channel
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragsM][kFragsN];
    #pragma unroll
    for (int i = 0; i < kFragsM; ++i) {{
        #pragma unroll
        for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
    }}

    fetch(0);
    stash();
    __syncthreads();
    // The loop bound is block-uniform, so every thread reaches every barrier.
    for (int k0 = 0; k0 < gemm_k; k0 += kBlockK) {{
        const bool has_next = k0 + kBlockK < gemm_k;
        if (has_next) fetch(k0 + kBlockK);   // in flight while the tensor cores work
        #pragma unroll
        for (int kk = 0; kk < kBlockK; kk += 16) {{
            wmma::fragment<wmma::matrix_a, 16, 16, 16, Element, wmma::col_major> a_frag[kFragsM];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, Element, wmma::col_major> b_frag[kFragsN];
            #pragma unroll
            for (int i = 0; i < kFragsM; ++i)
                wmma::load_matrix_sync(a_frag[i], &a_tile[kk][warp_m + 16 * i], kLdA);
            #pragma unroll
            for (int j = 0; j < kFragsN; ++j)
                wmma::load_matrix_sync(b_frag[j], &b_tile[warp_n + 16 * j][kk], kLdB);
            #pragma unroll
            for (int i = 0; i < kFragsM; ++i) {{
                #pragma unroll
                for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], a_frag[i], b_frag[j], acc[i][j]);
            }}
        }}
        __syncthreads();   // everyone is done reading this step's tiles
        if (has_next) {{
            stash();
            __syncthreads();
        }}
    }}

    // The last step ended with a barrier, so the tiles' bytes can take the f32 results.
    #pragma unroll
    for (int i = 0; i < kFragsM; ++i) {{
        #pragma unroll
        for (int j = 0; j < kFragsN; ++j)
            wmma::store_matrix_sync(&c_tile[warp_n + 16 * j][warp_m + 16 * i], acc[i][j], kLdC,
                                    wmma::mem_col_major);
    }}
    __syncthreads();

    // Epilogue: consecutive threads take consecutive pixels, so stores run along OW.
    for (int e = tid; e < kBlockM * kBlockN; e += kThreads) {{
        const int m_local = e % kBlockM;
        const int n_local = e / kBlockM;
        const long long pixel = m0 + m_local;
        const int out_channel = n0 + n_local;
        if (pixel < gemm_m && out_channel < out_channels) {{
            const long long image = pixel / (kOutH * kOutW);
            const int spatial = (int)(pixel % (kOutH * kOutW));
            const long long out_offset = (image * out_channels + out_channel) * (kOutH * kOutW) + spatial;
{store}        }}
    }}
}}"""
        params = launcher_params(problem)
        launcher = _launcher(problem, name, kernel)
        strategy = (f"conv2d as implicit GEMM (M=N*OH*OW, N=K, K=C*R*S) on tensor cores: WMMA 16x16x16 "
                    f"{anchor.dtype} with f32 accumulate, {bm}x{bn}x{bk} block tiles through shared memory, "
                    f"{wm}x{wn} warps, register prefetch of the next step; {_features(shape)}"
                    f"{fusion_note(problem)}")
        source = frame(name=name, strategy=strategy, tokens=dict(point), device_code=device,
                       launcher_code=launcher)
        source = source.replace(INCLUDES, INCLUDES + "#include <mma.h>\n", 1)
        grid = (max(1, -(-shape.gemm_m // bm)), max(1, -(-shape.gemm_n // bn)), 1)
        launch = Launch(kernel, grid, (32 * wm * wn, 1, 1), _wmma_smem_bytes(bm, bn, bk))
        return RenderedKernel(self.name, dict(point), source, [f"dice_{name}::{kernel}"], launcher, params,
                              [launch], f"WMMA implicit GEMM {bm}x{bn}x{bk}, {wm}x{wn} warps")


def _wmma_smem_bytes(block_m: int, block_n: int, block_k: int) -> int:
    tiles = block_k * (block_m + 8) * 2 + block_n * (block_k + 8) * 2
    return max(tiles, block_n * (block_m + 4) * 4)


SKETCHES: list[Sketch] = [ImplicitGemmConv(), TensorCoreConv()]

SAMPLE_INTENTS: list[str] = [
    "y = conv2d(x, w, padding=1); x: f32[32, 64, 56, 56]; w: f32[64, 64, 3, 3]",
    "y = relu(conv2d(x, w, b, padding=1)); x: f32[16, 128, 28, 28]; w: f32[256, 128, 3, 3]; b: f32[256]",
    "y = conv2d(x, w, b, stride=2, padding=3); x: f32[8, 3, 224, 224]; w: f32[64, 3, 7, 7]; b: f32[64]",
    "y = conv2d(x, w); x: f16[32, 256, 14, 14]; w: f16[512, 256, 1, 1]",
    "y = conv2d(x, w, padding=2, dilation=2); x: bf16[4, 64, 33, 47]; w: bf16[96, 64, 3, 3]",
    "y = conv2d(x, w, stride=2); x: f64[2, 5, 17, 19]; w: f64[7, 5, 3, 3]",
    "y = conv2d(x, w, padding=1); x: f32[N, 32, 64, 64]; w: f32[48, 32, 3, 3]; N=5",
]
