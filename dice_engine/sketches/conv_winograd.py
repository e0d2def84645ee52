"""Stride-1 convolutions by Winograd's minimal filtering: `conv.winograd` (conv2d) and
`conv.winograd_nd` (conv1d, conv_transpose1d/2d) serve f32 convolutions with stride 1, dilation 1,
one group and kernels of 2..7 taps along an axis, with bias and a fused elementwise epilogue.

The output is cut into tile x tile blocks (one row of them along an axis whose kernel has one
tap). With F(m, r) along each axis (`winograd_transforms`), a block of outputs costs
a_h * a_w multiplications per (input, output channel) pair instead of m_h * m_w * R * S: for
F(4x4, 3x3) 36 instead of 144. The work is four stages, one kernel each, through a workspace:
1. filter: U[e][k][c] = (G_h g G_w^T)[e] for every output channel k and input channel c (a
   transposed convolution of stride 1 is the forward one with the kernel flipped and the channel
   axes swapped, padding kernel - 1 - padding);
2. input: V[e][c][t] = (B_h^T d B_w)[e] for every input channel c and tile t, d the tile's input
   window (zero outside the image);
3. a batched GEMM per transform element e, M[e] = U[e] @ V[e] (K x C times C x tiles), by
   `gemm.simt_tiled` at its own default point;
4. output: Y = A_h^T M A_w per (output channel, tile), plus bias, through the epilogue, stored
   where the tile lies inside the output.
Stages 2-4 run over chunks of tiles so the workspace stays bounded (the `chunk_mib` token); the
filter transform runs once per call.

Rounding: the transforms cost accuracy. Over 2,000 tiles of 64 channels of standard normal
data, the largest error is about 3e-5 of the outputs' rms for F(4x4, 3x3) up to F(4x4, 5x5)
(`tests/sketches/test_conv_winograd`); the checks allow 1e-4 of the scale. F(6, r), about twice
F(4, r)'s error, is not offered. f64 and half types are left to the implicit GEMMs.
"""

from __future__ import annotations

from ..arch import ArchSpec
from ..ir import ops
from ..ir.dtypes import F32
from ..ir.graph import Program, TensorDecl
from ..ir.patterns import Problem, classify
from ..ir.work import GemmShape, Work
from .base import DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, frame, launcher_params, \
    launcher_signature
from .conv_geometry import ConvGeometry
from .fusion import fusion_note, fusion_unsupported, kernel_args, kernel_params, store_output
from .gemm import SimtGemm
from .winograd_transforms import MAX_POINTS, Matrix, apply_code, transform

THREADS = 256
MAX_TAPS = MAX_POINTS - 1          # F(2, 7) is the largest 2-output transform
CHUNK_TILE_MULTIPLE = 128          # chunks of whole GEMM column tiles (and 16-byte rows)
CHUNK_UNIT = 1 << 20               # bytes per unit of the chunk_mib token
_GEMM = SimtGemm()


class _Shape:
    """The convolution as the forward, stride-1 one the kernels compute, and its tiling."""

    def __init__(self, problem: Problem, point: Point):
        geo = ConvGeometry(problem)
        self.geo = geo
        assert isinstance(geo.batch, int)   # `unsupported` refuses a symbolic batch
        self.batch = geo.batch
        self.channels, self.out_channels = geo.channels, geo.out_channels
        _, self.in_h, self.in_w = geo.in_size
        _, self.out_h, self.out_w = geo.out_size
        _, self.r, self.s = geo.kernel
        _, pad_h, pad_w = geo.padding
        # out[o] = sum_k x[o + pad - k] w[k] (transposed, stride 1) = sum_k' x[o - (R-1-pad) + k'] w[R-1-k']
        self.pad_h = self.r - 1 - pad_h if geo.transposed else pad_h
        self.pad_w = self.s - 1 - pad_w if geo.transposed else pad_w
        tile = point["tile"]
        self.m_h = tile if self.r > 1 else 1
        self.m_w = tile if self.s > 1 else 1
        self.a_h, self.a_w = self.m_h + self.r - 1, self.m_w + self.s - 1
        self.elements = self.a_h * self.a_w
        self.tiles_h, self.tiles_w = -(-self.out_h // self.m_h), -(-self.out_w // self.m_w)
        self.tiles = self.batch * self.tiles_h * self.tiles_w
        per_tile = self.elements * (self.channels + self.out_channels) * 4   # V and M bytes per tile
        wanted = point["chunk_mib"] * CHUNK_UNIT // per_tile
        chunk = max(CHUNK_TILE_MULTIPLE, wanted // CHUNK_TILE_MULTIPLE * CHUNK_TILE_MULTIPLE)
        self.chunk = min(self.tiles, chunk)
        self.chunks = -(-self.tiles // self.chunk)
        self.tail = self.tiles - (self.chunks - 1) * self.chunk


def _gemm_problem(elements: int, rows: int, depth: int, columns: int) -> Problem:
    """M[e] = U[e] @ V[e]: the transformed filters times the transformed tiles."""
    u = ops.input_tensor("U", F32, (elements, rows, depth))
    v = ops.input_tensor("V", F32, (elements, depth, columns))
    program = Program({"U": TensorDecl("U", F32, u.shape), "V": TensorDecl("V", F32, v.shape)}, "M",
                      ops.make("matmul", [u, v]))
    return classify(program)


def _gemm_point(problem: Problem, arch: ArchSpec, rows: int) -> Point:
    """The GEMM's default point, with 64-row tiles where the transformed filters have no more rows
    (output channels): a 128-row tile would multiply as many rows of padding as of filters."""
    point = _GEMM.default_point(problem, arch)
    if rows <= 64 and point["block_m"] > 64:
        space = _GEMM.space(problem, arch)
        for block_k in (point["block_k"], 16):   # 16-deep slices split a 64-row tile into float4 loads
            narrow = dict(point, block_m=64, thread_m=point["thread_m"] // 2, block_k=block_k)
            if space.is_legal(narrow):
                return narrow
    return point


def _embedded(rendered: RenderedKernel) -> str:
    """A rendered GEMM's namespace and launcher, without the includes the frame already has and its
    token line (the convolution's strategy line names the GEMM's tokens). Its launcher becomes
    `static`: the file exports one host function, the convolution's."""
    assert rendered.launcher.startswith('extern "C" ') and rendered.launcher in rendered.source
    internal = rendered.launcher.replace('extern "C" ', "static ", 1)
    lines = rendered.source.replace(rendered.launcher, internal).splitlines()
    kept = [ln for ln in lines if not ln.startswith("#include") and not ln.startswith("// design tokens")]
    return "\n".join(kept)


def _two_pass(matrix_rows: Matrix, matrix_cols: Matrix, src: str, mid: str, dst: str, cols_in: int) -> str:
    """dst = matrix_rows @ src @ matrix_cols^T, unrolled: first along rows (per input column q),
    then along columns (per row q). `src`/`mid`/`dst` are array names."""
    rows_out, cols_out = len(matrix_rows), len(matrix_cols)
    first = apply_code(matrix_rows, f"{src}[{{j}}][q]", f"{mid}[{{i}}][q]")
    second = apply_code(matrix_cols, f"{mid}[q][{{j}}]", f"{dst}[q][{{i}}]")
    body1 = "".join(f"        {s}\n" for s in first)
    body2 = "".join(f"        {s}\n" for s in second)
    return (f"    float {mid}[{rows_out}][{cols_in}];\n"
            f"    #pragma unroll\n    for (int q = 0; q < {cols_in}; ++q) {{\n{body1}    }}\n"
            f"    float {dst}[{rows_out}][{cols_out}];\n"
            f"    #pragma unroll\n    for (int q = 0; q < {rows_out}; ++q) {{\n{body2}    }}\n")


class WinogradConv(Sketch):
    name = "conv.winograd"
    pattern = "conv2d"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        anchor = problem.anchor
        if anchor is None or anchor.op not in ("conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"):
            return f"{self.name} serves 1-D and 2-D convolutions"
        if any(a.op != "input" for a in anchor.args):
            return f"{self.name} needs input tensors as operands (a fused prologue is not supported)"
        if any(a.dtype != F32 for a in anchor.args) or anchor.dtype != F32:
            return f"{self.name} computes in f32 (other types take the implicit GEMMs)"
        geo = ConvGeometry(problem)
        if any(s != 1 for s in geo.stride) or any(d != 1 for d in geo.dilation) or geo.groups != 1:
            return f"{self.name} needs stride 1, dilation 1 and one group"
        if any(geo.output_padding):
            return f"{self.name} needs output_padding 0"
        if not isinstance(geo.batch, int):
            return f"{self.name} sizes its chunks at a literal batch"
        taps = geo.kernel[1:]
        if max(taps) < 2 or max(taps) > MAX_TAPS:
            return (f"{self.name} serves kernels of 2..{MAX_TAPS} taps along an axis, "
                    f"not {'x'.join(map(str, taps))}")
        return fusion_unsupported(problem, operands=())

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        geo = ConvGeometry(problem)
        widest = max(geo.kernel[1:])

        def points_fit(p: Point) -> str | None:
            need = p["tile"] + widest - 1
            if need <= MAX_POINTS:
                return None
            return f"F({p['tile']}, {widest}) needs {need} points (max {MAX_POINTS})"

        return DesignSpace(
            # F(6, r) would save a little more arithmetic at twice F(4, r)'s rounding error
            [Token("tile", (2, 4), "outputs per tile along each axis with more than one tap "
                   "(m of F(m, r))", (Role.WORK,)),
             Token("chunk_mib", (64, 256, 1024), "workspace of transformed tiles per pass (MiB): tiles are "
                   "transformed, multiplied and transformed back a chunk at a time", (Role.TILE,))],
            [points_fit])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        # F(4, r) cuts the multiplications 4-5x (F(2, r): 2-2.5x). Big chunks: few launches, full waves.
        space = self.space(problem, arch)
        return space.first_legal([{"tile": t, "chunk_mib": 1024} for t in (4, 2)])

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        sh = _Shape(problem, point)
        geo, anchor = sh.geo, problem.anchor
        x, w = anchor.args[0], anchor.args[1]
        th, tw = transform(sh.m_h, sh.r), transform(sh.m_w, sh.s)
        k_out, c_in = sh.out_channels, sh.channels
        gemms = {sh.chunk: _gemm_problem(sh.elements, k_out, c_in, sh.chunk)}
        if sh.tail != sh.chunk:
            gemms[sh.tail] = _gemm_problem(sh.elements, k_out, c_in, sh.tail)
        rendered_gemms = {cols: _GEMM.render(gp, arch, _gemm_point(gp, arch, k_out), f"{name}_gemm{cols}")
                          for cols, gp in gemms.items()}

        if geo.transposed:   # w[c][k][r][s], flipped
            weight = f"{w.name}[(((long long)ic * kK + oc) * kR + (kR - 1 - tap_r)) * kS + (kS - 1 - tap_s)]"
        else:
            weight = f"{w.name}[(((long long)oc * kC + ic) * kR + tap_r) * kS + tap_s]"
        value = "out_tile[i][j]"
        if geo.has_bias:
            value += f" + {anchor.args[2].name}[oc]"
        store = store_output(problem, "out_offset", [value], " " * 16)
        device = f"""constexpr int kC = {c_in}, kK = {k_out};
constexpr int kInH = {sh.in_h}, kInW = {sh.in_w}, kOutH = {sh.out_h}, kOutW = {sh.out_w};
constexpr int kR = {sh.r}, kS = {sh.s};
constexpr int kPadH = {sh.pad_h}, kPadW = {sh.pad_w};   // of the equivalent forward convolution
constexpr int kMH = {sh.m_h}, kMW = {sh.m_w};           // outputs per tile: F(kMH, kR) x F(kMW, kS)
constexpr int kAH = {sh.a_h}, kAW = {sh.a_w};           // transformed tile
constexpr int kTilesW = {sh.tiles_w}, kTilesPerImage = {sh.tiles_h} * kTilesW;
constexpr long long kTiles = {sh.tiles}LL;
constexpr int kChunk = {sh.chunk};                      // tiles per pass

struct TilePlace {{ long long image; int row0, col0; }};   // a tile's image and first output row and column

__device__ __forceinline__ TilePlace tile_place(long long tile) {{
    const int place = (int)(tile % kTilesPerImage);
    return {{tile / kTilesPerImage, place / kTilesW * kMH, place % kTilesW * kMW}};
}}

// U[e][k][c] = (G_h g G_w^T)[e]: one thread per (output channel, input channel)
__global__ void __launch_bounds__({THREADS})
{name}_filter(const float* __restrict__ {w.name}, float* __restrict__ U) {{
    const int idx = blockIdx.x * {THREADS} + threadIdx.x;
    if (idx >= kK * kC) return;
    const int oc = idx / kC, ic = idx % kC;
    float taps[kR][kS];
    #pragma unroll
    for (int tap_r = 0; tap_r < kR; ++tap_r)
        #pragma unroll
        for (int tap_s = 0; tap_s < kS; ++tap_s) taps[tap_r][tap_s] = {weight};
{_two_pass(th.g, tw.g, "taps", "taps_h", "taps_hw", sh.s)}    #pragma unroll
    for (int e = 0; e < kAH * kAW; ++e) U[((long long)e * kK + oc) * kC + ic] = taps_hw[e / kAW][e % kAW];
}}

// V[e][c][t] = (B_h^T d B_w)[e] for the chunk's tiles: one thread per (c, tile), tiles fastest
__global__ void __launch_bounds__({THREADS})
{name}_input(const float* __restrict__ {x.name}, float* __restrict__ V, long long tile0, int tiles) {{
    const long long idx = (long long)blockIdx.x * {THREADS} + threadIdx.x;
    if (idx >= (long long)kC * tiles) return;
    const int ic = (int)(idx / tiles), t = (int)(idx % tiles);
    const TilePlace at = tile_place(tile0 + t);
    const int row0 = at.row0 - kPadH, col0 = at.col0 - kPadW;   // the window starts in the padding
    const float* plane = {x.name} + (at.image * kC + ic) * (long long)(kInH * kInW);
    float win[kAH][kAW];
    #pragma unroll
    for (int i = 0; i < kAH; ++i)
        #pragma unroll
        for (int j = 0; j < kAW; ++j) {{
            const int row = row0 + i, col = col0 + j;
            win[i][j] = row >= 0 && row < kInH && col >= 0 && col < kInW ? plane[row * kInW + col] : 0.0f;
        }}
{_two_pass(th.bt, tw.bt, "win", "win_h", "win_hw", sh.a_w)}    #pragma unroll
    for (int e = 0; e < kAH * kAW; ++e) V[((long long)e * kC + ic) * tiles + t] = win_hw[e / kAW][e % kAW];
}}

// out = A_h^T M A_w (+ bias, epilogue) for the chunk's tiles: one thread per (k, tile), tiles fastest
__global__ void __launch_bounds__({THREADS})
{name}_output({kernel_params(problem)}, const float* __restrict__ Mt, long long tile0, int tiles) {{
    const long long idx = (long long)blockIdx.x * {THREADS} + threadIdx.x;
    if (idx >= (long long)kK * tiles) return;
    const int oc = (int)(idx / tiles), t = (int)(idx % tiles);
    const TilePlace at = tile_place(tile0 + t);
    float prod[kAH][kAW];
    #pragma unroll
    for (int e = 0; e < kAH * kAW; ++e) prod[e / kAW][e % kAW] = Mt[((long long)e * kK + oc) * tiles + t];
{_two_pass(th.at, tw.at, "prod", "prod_h", "out_tile", sh.a_w)}    #pragma unroll
    for (int i = 0; i < kMH; ++i) {{
        #pragma unroll
        for (int j = 0; j < kMW; ++j) {{
            const int oh = at.row0 + i, ow = at.col0 + j;
            if (oh < kOutH && ow < kOutW) {{
                const long long out_offset = ((at.image * kK + oc) * kOutH + oh) * kOutW + ow;
{store}            }}
        }}
    }}
}}"""
        ns = f"dice_{name}"
        calls = (f"            {name}_gemm{sh.chunk}_launch(U, V, Mt, stream);" if sh.tail == sh.chunk else
                 f"            if (tiles == kChunk) {name}_gemm{sh.chunk}_launch(U, V, Mt, stream);\n"
                 f"            else {name}_gemm{sh.tail}_launch(U, V, Mt, stream);")
        params, args = launcher_params(problem), kernel_args(problem)
        gemm_code = "\n\n".join(_embedded(g) for g in rendered_gemms.values())
        launcher = f"""{launcher_signature(name, params)} {{
    using namespace {ns};
    const size_t u_size = (size_t)(kAH * kAW) * kK * kC;
    const size_t v_size = (size_t)(kAH * kAW) * kC * kChunk, m_size = (size_t)(kAH * kAW) * kK * kChunk;
    float* workspace = nullptr;
    const size_t bytes = (u_size + v_size + m_size) * sizeof(float);
    if (cudaMallocAsync((void**)&workspace, bytes, stream) != cudaSuccess) return;
    float* U = workspace;
    float* V = U + u_size;
    float* Mt = V + v_size;
    {ns}::{name}_filter<<<(kK * kC + {THREADS - 1}) / {THREADS}, {THREADS}, 0, stream>>>({w.name}, U);
    for (long long tile0 = 0; tile0 < kTiles; tile0 += kChunk) {{
        const int tiles = (int)(kTiles - tile0 < kChunk ? kTiles - tile0 : kChunk);
        const unsigned input_blocks = (unsigned)(((long long)kC * tiles + {THREADS - 1}) / {THREADS});
        {ns}::{name}_input<<<input_blocks, {THREADS}, 0, stream>>>({x.name}, V, tile0, tiles);
{calls}
        const unsigned output_blocks = (unsigned)(((long long)kK * tiles + {THREADS - 1}) / {THREADS});
        {ns}::{name}_output<<<output_blocks, {THREADS}, 0, stream>>>({args}, Mt, tile0, tiles);
    }}
    cudaFreeAsync(workspace, stream);
}}"""
        gemm_main = rendered_gemms[sh.chunk]
        bm, bn = gemm_main.tokens["block_m"], gemm_main.tokens["block_n"]
        # the chunks' GEMM launches as one grid, for the cost model: it paces the whole
        gemm_launch = Launch(gemm_main.launches[0].kernel,
                             (-(-sh.chunk // bn) * sh.chunks, -(-k_out // bm), sh.elements),
                             gemm_main.launches[0].block, gemm_main.launches[0].smem_bytes)
        # (the passes after the first launch the same kernels again: a few microseconds, not counted)
        launches = [gemm_launch,
                    Launch(f"{name}_filter", (-(-k_out * c_in // THREADS), 1, 1), (THREADS, 1, 1), 0),
                    *[Launch(f"{name}_{stage}", (-(-rows * sh.tiles // THREADS), 1, 1), (THREADS, 1, 1), 0)
                      for stage, rows in (("input", c_in), ("output", k_out))]]
        transformed = sh.elements * (c_in + k_out) * sh.tiles * 4 * 2   # V and M, each written and read
        dram = 4 * (sh.batch * (c_in * sh.in_h * sh.in_w + k_out * sh.out_h * sh.out_w)
                    + k_out * c_in * sh.r * sh.s) + transformed
        work = Work(2.0 * sh.elements * k_out * c_in * sh.tiles, float(dram),
                    GemmShape(sh.elements, k_out, sh.tiles, c_in))
        gemm_tokens = " ".join(f"{k}={v}" for k, v in gemm_main.tokens.items())
        strategy = (f"{anchor.op} by Winograd F({sh.m_h}x{sh.m_w}, {sh.r}x{sh.s}): filter and tile "
                    f"transforms, {sh.elements} batched GEMMs {k_out}x{c_in} @ {c_in}x{sh.chunk} per pass "
                    f"(gemm.simt_tiled {gemm_tokens}), output transform; {sh.chunks} pass(es) of "
                    f"{sh.chunk} tiles; f32; {geo.features()}{fusion_note(problem)}")
        source = frame(name=name, strategy=strategy, tokens=dict(point), device_code=device,
                       launcher_code=f"{gemm_code}\n\n{launcher}")
        kernel_names = [f"{ns}::{name}_{k}" for k in ("filter", "input", "output")]
        kernel_names += [k for g in rendered_gemms.values() for k in g.kernel_names]
        return RenderedKernel(self.name, dict(point), source, kernel_names, launcher, params, launches,
                              f"Winograd F({sh.m_h}x{sh.m_w}, {sh.r}x{sh.s}), {sh.chunks} pass(es)",
                              work=work, main_launch=0)


class WinogradConvNd(WinogradConv):
    """The same kernels for the `conv` pattern: conv1d and stride-1 transposed convolutions (the
    name follows `conv.implicit_gemm_nd`: one sketch name per pattern)."""
    name = "conv.winograd_nd"
    pattern = "conv"


SKETCHES: list[Sketch] = [WinogradConv(), WinogradConvNd()]

SAMPLE_INTENTS: list[str] = [
    "y = conv2d(x, w, padding=1); x: f32[4, 16, 30, 34]; w: f32[24, 16, 3, 3]",
    "y = relu(conv2d(x, w, b, padding=2)); x: f32[2, 8, 21, 19]; w: f32[12, 8, 5, 5]; b: f32[12]",
    "y = conv_transpose2d(x, w); x: f32[2, 8, 13, 22]; w: f32[8, 12, 3, 5]",
    "y = conv_transpose2d(x, w, b, padding=1); x: f32[2, 8, 16, 16]; w: f32[8, 6, 3, 3]; b: f32[6]",
    "y = conv1d(x, w, padding=3); x: f32[4, 8, 100]; w: f32[16, 8, 7]",
]
