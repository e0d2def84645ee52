"""Every other convolution as an implicit GEMM: `conv.implicit_gemm_nd` serves conv1d/conv3d,
grouped conv2d and conv_transpose{1,2,3}d (SIMT; f32 in f32, f64 in f64, f16/bf16 accumulated
in f32), with stride, padding, dilation, groups, output_padding, bias and a fused elementwise
epilogue.

The GEMM view and the stride phases of a transposed convolution are `conv_geometry`'s. One
launch covers them all: blockIdx.x picks (block_m tile of the phase's output positions, phase)
with the phase varying fastest, blockIdx.y a block_n tile of the group's output channels,
blockIdx.z the group. A phase writes every stride-th output element, so alone its stores fill
32-byte sectors partly; blocks run in x order, so the phases of one region run side by side and
their partial sectors merge in L2 before any reaches memory. A phase is a template instance
whose extents are compile-time constants (divisions by constants, unrolled tap decoding);
blocks past a smaller phase's last tile return at once. Tiling is `conv.implicit_gemm`'s:
block_m x block_n output tile, block_k taps per shared-memory step, thread_m x thread_n register
tile, the next step prefetched into registers.
"""
from __future__ import annotations

import math

from ..arch import ArchSpec
from ..ir.patterns import Problem
from .base import (DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, dim_c, frame,
                   launcher_params, launcher_signature, load_as_compute)
from .conv import MAIN_LOOP, acc_bytes, acc_type, tile_constraints
from .conv_geometry import ConvGeometry, depthwise_direct
from .fusion import PACK, fusion_note, fusion_unsupported, kernel_args, kernel_params, store_output

MAX_GRID_X, MAX_GRID_Z = 2**31 - 1, 65535


def _phase_structs(geo: ConvGeometry) -> str:
    """One struct of compile-time extents per phase (dimension letters D, H, W)."""
    out = []
    for p, phase in enumerate(geo.phases):
        # A phase no tap reaches (its outputs hold only the bias) runs no K steps; its tap
        # extents stay 1 so the decoding never divides by zero.
        fields = [f"kEmpty = {int(any(axis.taps == 0 for axis in phase))}"]
        for letter, axis in zip("DHW", phase):
            fields += [f"{name}{letter} = {value}" for name, value in
                       (("kO0", axis.o0), ("kOStep", axis.o_step), ("kCount", axis.count), ("kK0", axis.k0),
                        ("kKStep", axis.k_step), ("kTaps", max(1, axis.taps)), ("kI0", axis.i0),
                        ("kJMul", axis.j_mul), ("kAMul", axis.a_mul))]
        out.append(f"struct Phase{p} {{ static constexpr int {', '.join(fields)}; }};")
    return "\n".join(out)


def _phase_switch(geo: ConvGeometry, args: str) -> str:
    cases = "".join(f"        case {p}: conv_phase<Phase{p}>({args}, group, m_tile, a_tile, b_tile); break;\n"
                    for p in range(len(geo.phases)))
    return f"""    switch (phase) {{
{cases}    }}"""


class ImplicitGemmConvNd(Sketch):
    name = "conv.implicit_gemm_nd"
    pattern = "conv"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        anchor = problem.anchor
        if anchor is None or not anchor.op.startswith("conv"):
            return "conv.implicit_gemm_nd serves convolutions"
        if any(a.op != "input" for a in anchor.args):
            return "convolution operands must be input tensors (a fused prologue is not supported)"
        geo = ConvGeometry(problem)
        if depthwise_direct(geo):
            return "one input channel per group and a small kernel: conv.depthwise serves it"
        if geo.groups > MAX_GRID_Z:
            return f"{geo.groups} groups exceed one grid's z extent ({MAX_GRID_Z})"
        if isinstance(geo.batch, int) and -(-geo.max_m // 32) * len(geo.phases) > MAX_GRID_X:
            return f"{geo.max_m} output positions x {len(geo.phases)} phases exceed one grid's x extent"
        return fusion_unsupported(problem, operands=())

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        return DesignSpace(
            [Token("block_m", (32, 64, 128), "output positions per block tile", (Role.TILE,)),
             Token("block_n", (16, 32, 64, 128), "output channels (of one group) per block tile",
                   (Role.TILE,)),
             Token("block_k", (8, 16), "taps (channel, kernel offset) per shared-memory step", (Role.TILE,)),
             Token("thread_m", (2, 4, 8), "output positions per thread (strided: coalesced stores)",
                   (Role.WORK,)),
             Token("thread_n", (1, 2, 4, 8), "output channels per thread (contiguous: vector smem reads)",
                   (Role.WORK,))],
            tile_constraints(problem, arch))

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        geo = ConvGeometry(problem)
        space = self.space(problem, arch)
        n = geo.out_channels_g
        if acc_type(problem) == "double":
            return space.first_legal([{"block_m": 64, "block_n": 64, "block_k": 8, "thread_m": 4,
                                       "thread_n": 4}])
        block_n = 128 if n >= 128 else 64 if n >= 64 else 32 if n >= 32 else 16
        blocks_128 = -(-geo.max_m // 128) * -(-n // block_n) * geo.groups * len(geo.phases)
        block_m = 128 if blocks_128 >= 2 * arch.sms else 64
        thread_n = {128: 8, 64: 4, 32: 2, 16: 2}[block_n]
        thread_m = 8 if block_m == 128 and block_n >= 64 else 4
        point = {"block_m": block_m, "block_n": block_n, "block_k": 8, "thread_m": thread_m,
                 "thread_n": thread_n}
        fallback = {"block_m": 64, "block_n": 32, "block_k": 8, "thread_m": 4, "thread_n": 2}
        return space.first_legal([point, fallback])

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        geo = ConvGeometry(problem)
        anchor = problem.anchor
        x, w = anchor.args[0], anchor.args[1]
        bm, bn, bk, tm, tn = (point[k] for k in ("block_m", "block_n", "block_k", "thread_m", "thread_n"))
        threads = (bm // tm) * (bn // tn)
        acc = acc_type(problem)
        b_vec = math.gcd(tn, 16 // acc_bytes(problem))
        kernel = f"{name}_kernel"
        value = "acc[i][j]"
        if geo.has_bias:
            bias = anchor.args[2]
            value = f"acc[i][j] + (Acc)({load_as_compute(bias.dtype, f'{bias.name}[out_channel]')})"
        store = store_output(problem, "out_offset", [value], " " * 16)
        a_value = load_as_compute(x.dtype, f"{x.name}[a_base + ((long long)in_c * kInD + in_d) * kInH * kInW "
                                           "+ in_h * kInW + in_w]")
        if geo.transposed:   # w[Cin][Cout/groups][KD][KH][KW]
            w_offset = ("((long long)(group * kCinG + in_c) * kCoutG + channel) * kKernelVolume "
                        "+ (k_d * kKernelH + k_h) * kKernelW + k_w")
        else:                # w[Cout][Cin/groups][KD][KH][KW]
            w_offset = ("((long long)(group * kCoutG + channel) * kCinG + in_c) * kKernelVolume "
                        "+ (k_d * kKernelH + k_h) * kKernelW + k_w")
        b_value = load_as_compute(w.dtype, f"{w.name}[{w_offset}]")
        params = kernel_params(problem)
        (ind, inh, inw), (od, oh, ow), (kd, kh, kw) = geo.in_size, geo.out_size, geo.kernel
        device = f"""{PACK}

using Acc = {acc};
constexpr int kBlockM = {bm};    // output positions per block
constexpr int kBlockN = {bn};    // output channels per block
constexpr int kBlockK = {bk};    // taps per step
constexpr int kThreadM = {tm};   // positions per thread, kBlockM / kThreadM apart
constexpr int kThreadN = {tn};   // channels per thread, contiguous
constexpr int kThreadsM = kBlockM / kThreadM;
constexpr int kThreads = kThreadsM * (kBlockN / kThreadN);
constexpr int kALoads = kBlockK * kBlockM / kThreads;   // input elements a thread stages per step
constexpr int kBLoads = kBlockK * kBlockN / kThreads;   // weights a thread stages per step
constexpr int kBVec = {b_vec};     // weights per shared-memory vector read
constexpr int kBPitch = kBlockN + 4;   // +4: transposing stores spread over banks, rows 16-byte aligned

constexpr int kInD = {ind}, kInH = {inh}, kInW = {inw};
constexpr int kOutD = {od}, kOutH = {oh}, kOutW = {ow};
constexpr int kKernelD = {kd}, kKernelH = {kh}, kKernelW = {kw};
constexpr int kKernelVolume = kKernelD * kKernelH * kKernelW;
constexpr int kCin = {geo.channels}, kCout = {geo.out_channels};
constexpr int kCinG = {geo.channels_g}, kCoutG = {geo.out_channels_g};   // per group
constexpr int kPhases = {len(geo.phases)};
// Per stride phase and dimension: outputs o = kO0 + kOStep*j (j < kCount), taps k = kK0 + kKStep*a
// (a < kTaps), reading input i = kI0 + j*kJMul + a*kAMul.
{_phase_structs(geo)}

template <class P>
__device__ __forceinline__ void conv_phase({params}, int group, long long m_tile,
                                           Acc (&a_tile)[kBlockK][kBlockM],
                                           Acc (&b_tile)[kBlockK][kBPitch]) {{
    constexpr int kSpatial = P::kCountD * P::kCountH * P::kCountW;
    constexpr int kTapsPerChannel = P::kTapsD * P::kTapsH * P::kTapsW;
    const long long batch = {dim_c(geo.batch)};
    const long long gemm_m = batch * kSpatial;
    constexpr int gemm_k = P::kEmpty ? 0 : kCinG * kTapsPerChannel;
    const long long m0 = m_tile * kBlockM;
    if (m0 >= gemm_m) return;   // a smaller phase's spare tile (block-uniform: before any barrier)
    const int n0 = blockIdx.y * kBlockN;
    const int tid = threadIdx.x;

    // The A loader: this thread's output position (fixed over the K loop) and its window origin.
    const int a_pixel = tid % kBlockM;
    const int a_tap = tid / kBlockM;                        // first tap row; kThreads / kBlockM apart
    const long long a_m = m0 + a_pixel;
    const bool a_valid = a_m < gemm_m;
    const long long a_image = a_valid ? a_m / kSpatial : 0;
    const int a_spatial = (int)(a_m % kSpatial);
    const int a_d0 = P::kI0D + a_spatial / (P::kCountH * P::kCountW) * P::kJMulD;
    const int a_h0 = P::kI0H + a_spatial / P::kCountW % P::kCountH * P::kJMulH;
    const int a_w0 = P::kI0W + a_spatial % P::kCountW * P::kJMulW;
    const long long a_base = (a_image * kCin + (long long)group * kCinG) * kInD * kInH * kInW;
    // The B loader: this thread's tap (fixed) and first output channel.
    const int b_tap = tid % kBlockK;
    const int b_channel = tid / kBlockK;                    // kThreads / kBlockK apart

    Acc a_stage[kALoads];
    Acc b_stage[kBLoads];
    auto fetch = [&](int k0) {{   // global -> registers, zeros outside the tensors
        #pragma unroll
        for (int l = 0; l < kALoads; ++l) {{
            const int tap = k0 + a_tap + l * (kThreads / kBlockM);   // (c, a_d, a_h, a_w)
            const int in_c = tap / kTapsPerChannel;
            const int a_d = tap / (P::kTapsH * P::kTapsW) % P::kTapsD;
            const int a_h = tap / P::kTapsW % P::kTapsH;
            const int a_w = tap % P::kTapsW;
            const int in_d = a_d0 + a_d * P::kAMulD;
            const int in_h = a_h0 + a_h * P::kAMulH;
            const int in_w = a_w0 + a_w * P::kAMulW;
            const bool inside = a_valid && tap < gemm_k && in_d >= 0 && in_d < kInD
                                && in_h >= 0 && in_h < kInH && in_w >= 0 && in_w < kInW;   // else padding
            a_stage[l] = inside ? Acc({a_value}) : Acc(0);
        }}
        #pragma unroll
        for (int l = 0; l < kBLoads; ++l) {{
            const int channel = n0 + b_channel + l * (kThreads / kBlockK);
            const int tap = k0 + b_tap;
            const int in_c = tap / kTapsPerChannel;
            const int k_d = P::kK0D + tap / (P::kTapsH * P::kTapsW) % P::kTapsD * P::kKStepD;
            const int k_h = P::kK0H + tap / P::kTapsW % P::kTapsH * P::kKStepH;
            const int k_w = P::kK0W + tap % P::kTapsW * P::kKStepW;
            const bool inside = channel < kCoutG && tap < gemm_k;
            b_stage[l] = inside ? Acc({b_value}) : Acc(0);
        }}
    }};
    auto stash = [&]() {{   // registers -> shared memory
        #pragma unroll
        for (int l = 0; l < kALoads; ++l) a_tile[a_tap + l * (kThreads / kBlockM)][a_pixel] = a_stage[l];
        #pragma unroll
        for (int l = 0; l < kBLoads; ++l) b_tile[b_tap][b_channel + l * (kThreads / kBlockK)] = b_stage[l];
    }};

    const int tx = tid % kThreadsM;   // positions tx, tx + kThreadsM, ...
    const int ty = tid / kThreadsM;   // channels ty * kThreadN ... + kThreadN - 1
{MAIN_LOOP}    // Epilogue: consecutive threads hold consecutive positions, so stores run along W.
    #pragma unroll
    for (int i = 0; i < kThreadM; ++i) {{
        const long long position = m0 + tx + i * kThreadsM;
        if (position >= gemm_m) continue;
        const long long image = position / kSpatial;
        const int spatial = (int)(position % kSpatial);
        const int o_d = P::kO0D + spatial / (P::kCountH * P::kCountW) * P::kOStepD;
        const int o_h = P::kO0H + spatial / P::kCountW % P::kCountH * P::kOStepH;
        const int o_w = P::kO0W + spatial % P::kCountW * P::kOStepW;
        #pragma unroll
        for (int j = 0; j < kThreadN; ++j) {{
            const int channel = n0 + ty * kThreadN + j;
            if (channel < kCoutG) {{
                const int out_channel = group * kCoutG + channel;
                const long long out_offset = ((image * kCout + out_channel) * kOutD + o_d) * (kOutH * kOutW)
                                             + o_h * kOutW + o_w;
{store}            }}
        }}
    }}
}}

// Min 1 block per SM: with several phase instances behind one switch, ptxas otherwise aims at
// too few registers and spills.
__global__ void __launch_bounds__(kThreads, 1)
{kernel}({params}) {{
    // One pair of tiles for every phase's instance (each instance declaring its own would
    // multiply the block's shared memory by the phase count).
    __shared__ Acc a_tile[kBlockK][kBlockM];                 // [tap][position]
    __shared__ __align__(16) Acc b_tile[kBlockK][kBPitch];   // [tap][channel]
    const int group = blockIdx.z;
    const int phase = blockIdx.x % kPhases;
    const long long m_tile = blockIdx.x / kPhases;
{_phase_switch(geo, kernel_args(problem))}
}}"""
        largest_phase = max(math.prod(a.count for a in p) for p in geo.phases)
        launcher = f"""{launcher_signature(name, launcher_params(problem))} {{
    using namespace dice_{name};
    const long long gemm_m = (long long){dim_c(geo.batch)} * {largest_phase};
    if (gemm_m == 0) return;
    const dim3 grid((unsigned)((gemm_m + kBlockM - 1) / kBlockM * kPhases),
                    (unsigned)((kCoutG + kBlockN - 1) / kBlockN), (unsigned){geo.groups});
    {kernel}<<<grid, kThreads, 0, stream>>>({kernel_args(problem)});
}}"""
        precision = {"f64": "f64 SIMT", "f32": "f32 SIMT"}.get(
            anchor.dtype.name, f"{anchor.dtype} inputs, SIMT f32 accumulate (no tensor cores)")
        view = "gathered per stride phase" if geo.transposed else "im2col gathered on the fly"
        strategy = (f"{anchor.op} as implicit GEMM per group (M=N*spatial, N=Cout/groups, K=Cin/groups*taps; "
                    f"{view}), {bm}x{bn}x{bk} block tiles through shared memory, {tm}x{tn} register tile per "
                    f"thread, register prefetch of the next step; {precision}; {geo.features()}"
                    f"{fusion_note(problem)}")
        source = frame(name=name, strategy=strategy, tokens=dict(point), device_code=device,
                       launcher_code=launcher)
        grid = (max(1, -(-geo.max_m // bm)) * len(geo.phases), max(1, -(-geo.out_channels_g // bn)),
                geo.groups)
        launch = Launch(kernel, grid, (threads, 1, 1), bk * (bm + bn + 4) * acc_bytes(problem))
        return RenderedKernel(self.name, dict(point), source, [f"dice_{name}::{kernel}"], launcher,
                              launcher_params(problem), [launch],
                              f"N-d implicit GEMM {bm}x{bn}x{bk}, thread tile {tm}x{tn}, "
                              f"{geo.groups} group(s) x {len(geo.phases)} phase(s)")


SKETCHES: list[Sketch] = [ImplicitGemmConvNd()]

SAMPLE_INTENTS: list[str] = [
    "y = conv3d(x, w, padding=1); x: f32[2, 8, 10, 12, 14]; w: f32[16, 8, 3, 3, 3]",
    "y = conv1d(x, w, b, stride=2, dilation=3); x: f32[4, 16, 300]; w: f32[32, 16, 5]; b: f32[32]",
    "y = conv2d(x, w, padding=1, groups=4); x: f32[8, 32, 28, 28]; w: f32[64, 8, 3, 3]",
    "y = conv_transpose2d(x, w, stride=2, padding=1, output_padding=1); x: f32[8, 32, 16, 16]; "
    "w: f32[32, 64, 3, 3]",
    "y = relu(conv_transpose3d(x, w, b, stride=2, padding=1, groups=2)); x: f32[2, 8, 6, 7, 8]; "
    "w: f32[8, 4, 3, 3, 3]; b: f32[8]",
    "y = conv_transpose1d(x, w, stride=3, padding=2, dilation=2); x: f64[2, 6, 20]; w: f64[6, 5, 4]",
]
