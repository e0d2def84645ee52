"""Fused scaled-dot-product attention: softmax(Q Kᵀ · scale [+ causal mask]) V in one kernel.

A block owns `block_q` queries of one (batch, head) and makes one pass over the keys, `block_k`
at a time (FlashAttention's schedule, in plain FP32/FP64 CUDA): the score tile Q Kᵀ is built
from shared-memory slices of Q and K (32 columns of the head dimension at a time), a warp per
query row folds the tile into a running max and sum (online softmax) and leaves exp(s - max)
in shared memory, the output accumulator (registers, spread over the block) is rescaled by
exp(old max - new max) and gains P V, V streamed through shared memory a few key rows at a
time. Nothing of size keys × queries is ever written; K and V are re-read once per query
block (from L2 mostly).

The sketch recognises the graph the intent and KernelBench front ends build for
`scaled_dot_product_attention` (two matmuls around a last-axis softmax of scaled scores,
optionally the causal `where`, batch dimensions merged by views) on contiguous inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..arch import ArchSpec
from ..ir.graph import Node
from ..ir.patterns import Problem
from .base import (
    DesignSpace,
    Launch,
    Point,
    RenderedKernel,
    Role,
    Sketch,
    Token,
    accepted,
    dim_c,
    frame,
    launcher_params,
    launcher_signature,
    load_as_compute,
    numel_c,
    store_from_compute,
)

D_CHUNK = 32  # head-dimension columns of Q and K staged per step
STATIC_SMEM = 48 * 1024  # the static shared-memory limit of one block
MAX_ACCUMULATORS = 64  # output accumulators per thread (registers)
L2_REREAD_FACTOR = 3.0  # K/V re-reads come mostly from L2, about this much faster than DRAM
# Past this head dimension the fused kernel streams Q, K and V through shared memory 32 columns
# at a time at SIMT shared-memory rates (KernelBench's d=1024 ran 6x behind cuBLAS on an H100),
# while Q Kᵀ and P V as tiled GEMMs around a row softmax stay near the GEMM sketch's rate.
MAX_FUSED_HEAD_DIM = 256


@dataclass(frozen=True)
class Attention:
    q: Node
    k: Node
    v: Node
    scale: float
    causal: bool
    batch: tuple  # the merged leading dimensions (batch, heads, ...)
    sq: object  # query count (int or symbol)
    sk: object  # key count
    d: int  # head dimension of Q and K
    dv: int  # head dimension of V (and of the output)


def _peel(node: Node) -> Node:
    """Look through views that only merge or split leading (batch) dimensions."""
    while node.op == "reshape" and node.shape[-2:] == node.args[0].shape[-2:]:
        node = node.args[0]
    return node


def _causal_mask(cond: Node) -> bool:
    """`index(dim=-1) <= index(dim=-2)` (key ≤ query), as the intent front end builds it."""
    if cond.op != "le" or any(a.op != "index" for a in cond.args):
        return False
    key, query = cond.args
    return key.attr("dim") == key.rank - 1 and query.attr("dim") == query.rank - 2


def _scores(node: Node) -> tuple[Node, float, bool] | str:
    causal = False
    if node.op == "where":
        cond, kept, other = node.args
        if not (_causal_mask(cond) and other.op == "const" and other.value == float("-inf")):
            return "a mask other than the causal one"
        node, causal = kept, True
    scale = 1.0
    if node.op == "mul":
        consts = [a for a in node.args if a.op == "const"]
        rest = [a for a in node.args if a.op != "const"]
        if len(consts) != 1 or len(rest) != 1:
            return "scores scaled by a tensor"
        scale, node = float(consts[0].value), rest[0]
    node = _peel(node)
    if node.op != "matmul":
        return "softmax of something other than Q Kᵀ"
    return node, scale, causal


def match(program_output: Node) -> Attention | str:
    """The attention in `program_output`, or why it is not one this sketch fuses."""
    out = _peel(program_output)
    if out.op != "matmul":
        return "not an attention (the output is not P V)"
    p, v = (_peel(a) for a in out.args)
    if p.op != "softmax" or p.attr("dim") != p.rank - 1:
        return "not an attention (no last-axis softmax before the second matmul)"
    scores = _scores(p.args[0])
    if isinstance(scores, str):
        return f"not a fusable attention: {scores}"
    qk, scale, causal = scores
    q, kt = (_peel(a) for a in qk.args)
    if kt.op != "permute" or list(kt.attr("dims")) != list(range(kt.rank - 2)) + [kt.rank - 1, kt.rank - 2]:
        return "not an attention (the second operand of Q Kᵀ is not a transposed K)"
    k = _peel(kt.args[0])
    if any(t.op != "input" for t in (q, k, v)):
        return "attention operands must be input tensors"
    if not (q.rank == k.rank == v.rank >= 2) or not (q.shape[:-2] == k.shape[:-2] == v.shape[:-2]):
        return "attention operands must share their batch dimensions"
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        return "attention operand shapes disagree"
    d, dv = q.shape[-1], v.shape[-1]
    if not (isinstance(d, int) and isinstance(dv, int)):
        return "attention needs concrete head dimensions"
    if any(not t.dtype.is_float for t in (q, k, v)):
        return "attention on integer tensors"
    if max(d, dv) > MAX_FUSED_HEAD_DIM:
        return (f"head dimension {max(d, dv)} is past the fused kernel's {MAX_FUSED_HEAD_DIM}: "
                "GEMM + softmax + GEMM kernels serve it")
    return Attention(q, k, v, scale, causal, tuple(q.shape[:-2]), q.shape[-2], k.shape[-2], d, dv)


@dataclass(frozen=True)
class Layout:
    """How `threads` threads cover the score tile and the output tile, and the V staging depth."""

    score_cols: int  # threads across the score tile's key columns
    score_rows: int  # ... across its query rows
    rows_per_thread: int
    cols_per_thread: int
    out_cols: int  # threads across the output's value columns
    out_rows: int
    out_rows_per_thread: int
    out_cols_per_thread: int
    v_rows: int  # key rows of V staged in shared memory at a time
    smem_bytes: int


def _pow2_at_least(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def layout(att: Attention, point: Point, elem: int) -> Layout | str:
    bq, bk, nt = point["block_q"], point["block_k"], point["threads"]
    per = bq * bk // nt
    if per < 1:
        return f"{nt} threads exceed the {bq}x{bk} score tile"
    cs = next(c for c in (4, 2, 1) if c * c <= per and bk % c == 0)
    sc = bk // cs
    if nt % sc or bq % (nt // sc) or (bq // (nt // sc)) * cs != per:
        return f"{nt} threads do not tile the {bq}x{bk} score tile evenly"
    tc = min(nt, _pow2_at_least(att.dv))
    tr = nt // tc
    if tr > bq or bq % tr:
        return f"{nt} threads do not tile {bq} query rows of the output"
    ro, co = bq // tr, -(-att.dv // tc)
    if ro * co > MAX_ACCUMULATORS:
        return f"{ro * co} output accumulators per thread exceed {MAX_ACCUMULATORS}"
    fixed = elem * (bq * (D_CHUNK + 1) + bk * (D_CHUNK + 1) + bq * (bk + 1) + 3 * bq)
    kc = next((c for c in (16, 8, 4, 2, 1) if bk % c == 0 and fixed + elem * c * att.dv <= STATIC_SMEM), 0)
    if not kc:
        return f"the tiles need more than {STATIC_SMEM} bytes of shared memory"
    return Layout(sc, nt // sc, bq // (nt // sc), cs, tc, tr, ro, co, kc, fixed + elem * kc * att.dv)


class FusedAttention(Sketch):
    name = "attention.fused"
    pattern = "program"

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        found = match(problem.program.output)
        if isinstance(found, str):
            return found
        names = {
            found.q.name,
            found.k.name,
            found.v.name,
            problem.program.output_name,
            *problem.program.symbol_names(),
        }
        clash = sorted(n for n in names if n.startswith("dz_"))
        return f"names starting with 'dz_' are reserved: {', '.join(clash)}" if clash else None

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        att = accepted(match(problem.program.output))
        elem = 8 if att.q.dtype.name == "f64" else 4
        tokens = [
            Token("block_q", (16, 32, 64), "queries per block (rows of the score tile)", (Role.TILE,)),
            Token("block_k", (32, 64), "keys per online-softmax step (score tile columns)", (Role.TILE,)),
            Token("threads", (128, 256, 512), "threads per block", (Role.THREADS,)),
        ]

        def fits(p: Point) -> str | None:
            if p["threads"] > arch.max_threads_per_block:
                return f"{p['threads']} threads exceed the block limit {arch.max_threads_per_block}"
            got = layout(att, p, elem)
            return got if isinstance(got, str) else None

        return DesignSpace(tokens, [fits])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        space = self.space(problem, arch)
        return space.first_legal(
            [{"block_q": q, "block_k": 64, "threads": t} for q in (64, 32, 16) for t in (256, 512, 128)]
        )

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        att = accepted(match(problem.program.output))
        program = problem.program
        ctype = "double" if att.q.dtype.name == "f64" else "float"
        lay = layout(att, point, 8 if ctype == "double" else 4)
        assert not isinstance(lay, str)
        params = launcher_params(problem)
        kernel = f"{name}_attention"
        device = _kernel_text(
            kernel, att, point, lay, ctype, params, program.output_name, program.output.dtype
        )
        tiles = (
            f"{numel_c(att.batch)} * (({dim_c(att.sq)} + {point['block_q'] - 1}LL) / {point['block_q']}LL)"
        )
        args = ", ".join(p.name for p in params)
        launcher = "\n".join(
            [
                launcher_signature(name, params) + " {",
                f"    const long long dz_tiles = {tiles};",
                "    const unsigned dz_grid = (unsigned)(dz_tiles < 2147483647LL ? dz_tiles : 2147483647LL);",
                f"    dice_{name}::{kernel}<<<dz_grid, {point['threads']}, 0, stream>>>({args});",
                "}",
            ]
        )
        strategy = (
            f"fused attention, a block per {point['block_q']} queries, one pass over keys "
            f"{point['block_k']} at a time with an online softmax" + (", causal" if att.causal else "")
        )
        source = frame(name=name, strategy=strategy, tokens=point, device_code=device, launcher_code=launcher)
        batch = program.concrete_shape(att.batch) if att.batch else ()
        heads = 1
        for b in batch:
            heads *= b
        sq, sk = program.concrete_shape((att.sq, att.sk))
        blocks = heads * -(-sq // point["block_q"])
        summary = f"{self.name} " + " ".join(f"{k}={v}" for k, v in point.items())
        return RenderedKernel(
            self.name,
            dict(point),
            source,
            [f"dice_{name}::{kernel}"],
            launcher,
            params,
            [
                Launch(
                    kernel, (max(1, min(blocks, 2**31 - 1)), 1, 1), (point["threads"], 1, 1), lay.smem_bytes
                )
            ],
            summary,
            dram_bytes=_traffic(att, heads, sq, sk, point["block_q"]),
        )


def _traffic(att: Attention, heads: int, sq: int, sk: int, block_q: int) -> float:
    """DRAM bytes (L2 re-reads discounted): Q read and O written once, K and V once per query
    block, the re-reads served mostly by L2."""
    kv = heads * sk * (att.d * att.k.dtype.size + att.dv * att.v.dtype.size)
    rereads = max(0, -(-sq // block_q) - 1)
    return heads * sq * (att.d * att.q.dtype.size + att.dv * 4) + kv * (1 + rereads / L2_REREAD_FACTOR)


def _kernel_text(
    kernel: str, att: Attention, point: Point, lay: Layout, t: str, params: list, out_name: str, out_dtype
) -> str:
    bq, bk, nt = point["block_q"], point["block_k"], point["threads"]
    f = "f" if t == "float" else ""
    sq, sk = f"(long long){dim_c(att.sq)}", f"(long long){dim_c(att.sk)}"
    d, dv = att.d, att.dv
    q, k, v = att.q.name, att.k.name, att.v.name

    def load(node: Node, expr: str) -> str:
        return f"({t}){load_as_compute(node.dtype, expr)}"

    signature = ", ".join(
        f"{p.c_type} __restrict__ {p.name}" if p.role != "symbol" else f"long long {p.name}" for p in params
    )
    key_end = f"(dz_q0 + {bq} < {sk} ? dz_q0 + {bq} : {sk})" if att.causal else sk
    stored = store_from_compute(out_dtype, "dz_acc[dz_i][dz_j] * dz_inv")
    keep = "dz_key < " + sk + (" && dz_key <= dz_q0 + dz_r" if att.causal else "")
    return f"""\
// One block per (batch-head, {bq} queries); keys {bk} at a time; online softmax in {t}.
__global__ void __launch_bounds__({nt}) {kernel}({signature}) {{
    __shared__ {t} dz_qs[{bq}][{D_CHUNK + 1}];
    __shared__ {t} dz_ks[{bk}][{D_CHUNK + 1}];
    __shared__ {t} dz_ps[{bq}][{bk + 1}];
    __shared__ {t} dz_vs[{lay.v_rows}][{dv}];
    __shared__ {t} dz_m[{bq}], dz_l[{bq}], dz_alpha[{bq}];
    const int dz_t = threadIdx.x, dz_lane = dz_t & 31, dz_warp = dz_t >> 5;
    const int dz_sr = dz_t / {lay.score_cols}, dz_sc = dz_t % {lay.score_cols};
    const int dz_or = dz_t / {lay.out_cols}, dz_oc = dz_t % {lay.out_cols};
    const long long dz_qblocks = ({sq} + {bq - 1}) / {bq};
    const long long dz_tiles = {numel_c(att.batch)} * dz_qblocks;
    for (long long dz_tile = blockIdx.x; dz_tile < dz_tiles; dz_tile += gridDim.x) {{
        const long long dz_bh = dz_tile / dz_qblocks, dz_q0 = (dz_tile % dz_qblocks) * {bq};
        const auto* dz_qb = {q} + dz_bh * {sq} * {d};
        const auto* dz_kb = {k} + dz_bh * {sk} * {d};
        const auto* dz_vb = {v} + dz_bh * {sk} * {dv};
        auto* dz_ob = {out_name} + dz_bh * {sq} * {dv};
        for (int dz_r = dz_t; dz_r < {bq}; dz_r += {nt}) {{ dz_m[dz_r] = -INFINITY; dz_l[dz_r] = 0; }}
        {t} dz_acc[{lay.out_rows_per_thread}][{lay.out_cols_per_thread}];
        #pragma unroll
        for (int dz_i = 0; dz_i < {lay.out_rows_per_thread}; ++dz_i)
            #pragma unroll
            for (int dz_j = 0; dz_j < {lay.out_cols_per_thread}; ++dz_j) dz_acc[dz_i][dz_j] = 0;
        const long long dz_kend = {key_end};
        for (long long dz_k0 = 0; dz_k0 < dz_kend; dz_k0 += {bk}) {{
            {t} dz_s[{lay.rows_per_thread}][{lay.cols_per_thread}];
            #pragma unroll
            for (int dz_i = 0; dz_i < {lay.rows_per_thread}; ++dz_i)
                #pragma unroll
                for (int dz_j = 0; dz_j < {lay.cols_per_thread}; ++dz_j) dz_s[dz_i][dz_j] = 0;
            for (int dz_d0 = 0; dz_d0 < {d}; dz_d0 += {D_CHUNK}) {{
                for (int dz_e = dz_t; dz_e < {bq * D_CHUNK}; dz_e += {nt}) {{
                    const int dz_r = dz_e / {D_CHUNK}, dz_c = dz_e % {D_CHUNK};
                    dz_qs[dz_r][dz_c] = (dz_q0 + dz_r < {sq} && dz_d0 + dz_c < {d})
                        ? {load(att.q, f"dz_qb[(dz_q0 + dz_r) * {d} + dz_d0 + dz_c]")} : ({t})0;
                }}
                for (int dz_e = dz_t; dz_e < {bk * D_CHUNK}; dz_e += {nt}) {{
                    const int dz_r = dz_e / {D_CHUNK}, dz_c = dz_e % {D_CHUNK};
                    dz_ks[dz_r][dz_c] = (dz_k0 + dz_r < {sk} && dz_d0 + dz_c < {d})
                        ? {load(att.k, f"dz_kb[(dz_k0 + dz_r) * {d} + dz_d0 + dz_c]")} : ({t})0;
                }}
                __syncthreads();
                #pragma unroll 8
                for (int dz_c = 0; dz_c < {D_CHUNK}; ++dz_c) {{
                    {t} dz_kv[{lay.cols_per_thread}];
                    #pragma unroll
                    for (int dz_j = 0; dz_j < {lay.cols_per_thread}; ++dz_j)
                        dz_kv[dz_j] = dz_ks[dz_sc + {lay.score_cols} * dz_j][dz_c];
                    #pragma unroll
                    for (int dz_i = 0; dz_i < {lay.rows_per_thread}; ++dz_i) {{
                        const {t} dz_qv = dz_qs[dz_sr + {lay.score_rows} * dz_i][dz_c];
                        #pragma unroll
                        for (int dz_j = 0; dz_j < {lay.cols_per_thread}; ++dz_j)
                            dz_s[dz_i][dz_j] += dz_qv * dz_kv[dz_j];
                    }}
                }}
                __syncthreads();
            }}
            #pragma unroll
            for (int dz_i = 0; dz_i < {lay.rows_per_thread}; ++dz_i)
                #pragma unroll
                for (int dz_j = 0; dz_j < {lay.cols_per_thread}; ++dz_j) {{
                    const long long dz_r = dz_sr + {lay.score_rows} * dz_i;
                    const int dz_c = dz_sc + {lay.score_cols} * dz_j;
                    const long long dz_key = dz_k0 + dz_c;
                    dz_ps[dz_r][dz_c] = ({keep}) ? dz_s[dz_i][dz_j] * ({t}){att.scale!r} : -INFINITY;
                }}
            __syncthreads();
            for (int dz_r = dz_warp; dz_r < {bq}; dz_r += {nt // 32}) {{
                {t} dz_mx = -INFINITY;
                for (int dz_c = dz_lane; dz_c < {bk}; dz_c += 32) dz_mx = fmax{f}(dz_mx, dz_ps[dz_r][dz_c]);
                for (int dz_o = 16; dz_o > 0; dz_o >>= 1)
                    dz_mx = fmax{f}(dz_mx, __shfl_xor_sync(0xffffffffu, dz_mx, dz_o));
                const {t} dz_old = dz_m[dz_r], dz_new = fmax{f}(dz_old, dz_mx);
                {t} dz_sum = 0;
                for (int dz_c = dz_lane; dz_c < {bk}; dz_c += 32) {{
                    const {t} dz_p = dz_new == -INFINITY ? ({t})0 : exp{f}(dz_ps[dz_r][dz_c] - dz_new);
                    dz_ps[dz_r][dz_c] = dz_p;
                    dz_sum += dz_p;
                }}
                for (int dz_o = 16; dz_o > 0; dz_o >>= 1)
                    dz_sum += __shfl_xor_sync(0xffffffffu, dz_sum, dz_o);
                __syncwarp();   // every lane has read dz_m[dz_r] before lane 0 replaces it
                if (dz_lane == 0) {{
                    const {t} dz_a = dz_new == -INFINITY ? ({t})1 : exp{f}(dz_old - dz_new);
                    dz_alpha[dz_r] = dz_a;
                    dz_l[dz_r] = dz_l[dz_r] * dz_a + dz_sum;
                    dz_m[dz_r] = dz_new;
                }}
            }}
            __syncthreads();
            #pragma unroll
            for (int dz_i = 0; dz_i < {lay.out_rows_per_thread}; ++dz_i) {{
                const {t} dz_a = dz_alpha[dz_or + {lay.out_rows} * dz_i];
                #pragma unroll
                for (int dz_j = 0; dz_j < {lay.out_cols_per_thread}; ++dz_j) dz_acc[dz_i][dz_j] *= dz_a;
            }}
            for (int dz_kc = 0; dz_kc < {bk}; dz_kc += {lay.v_rows}) {{
                for (int dz_e = dz_t; dz_e < {lay.v_rows * dv}; dz_e += {nt}) {{
                    const int dz_r = dz_e / {dv}, dz_c = dz_e % {dv};
                    dz_vs[dz_r][dz_c] = dz_k0 + dz_kc + dz_r < {sk}
                        ? {load(att.v, f"dz_vb[(dz_k0 + dz_kc + dz_r) * {dv} + dz_c]")} : ({t})0;
                }}
                __syncthreads();
                #pragma unroll
                for (int dz_kk = 0; dz_kk < {lay.v_rows}; ++dz_kk) {{
                    {t} dz_vv[{lay.out_cols_per_thread}];
                    #pragma unroll
                    for (int dz_j = 0; dz_j < {lay.out_cols_per_thread}; ++dz_j) {{
                        const int dz_c = dz_oc + {lay.out_cols} * dz_j;
                        dz_vv[dz_j] = dz_c < {dv} ? dz_vs[dz_kk][dz_c] : ({t})0;
                    }}
                    #pragma unroll
                    for (int dz_i = 0; dz_i < {lay.out_rows_per_thread}; ++dz_i) {{
                        const {t} dz_p = dz_ps[dz_or + {lay.out_rows} * dz_i][dz_kc + dz_kk];
                        #pragma unroll
                        for (int dz_j = 0; dz_j < {lay.out_cols_per_thread}; ++dz_j)
                            dz_acc[dz_i][dz_j] += dz_p * dz_vv[dz_j];
                    }}
                }}
                __syncthreads();
            }}
        }}
        #pragma unroll
        for (int dz_i = 0; dz_i < {lay.out_rows_per_thread}; ++dz_i) {{
            const long long dz_r = dz_or + {lay.out_rows} * dz_i;
            if (dz_q0 + dz_r < {sq}) {{
                const {t} dz_inv = ({t})1 / dz_l[dz_r];
                #pragma unroll
                for (int dz_j = 0; dz_j < {lay.out_cols_per_thread}; ++dz_j) {{
                    const int dz_c = dz_oc + {lay.out_cols} * dz_j;
                    if (dz_c < {dv})
                        dz_ob[(dz_q0 + dz_r) * {dv} + dz_c] = {stored};
                }}
            }}
        }}
        __syncthreads();
    }}
}}"""


SKETCHES: list[Sketch] = [FusedAttention()]

SAMPLE_INTENTS: list[str] = [
    "y = scaled_dot_product_attention(q, k, v); q: f32[4, 256, 64]; k: f32[4, 256, 64]; v: f32[4, 256, 64]",
    "y = scaled_dot_product_attention(q, k, v, is_causal=True); q: f16[8, 128, 64]; k: f16[8, 128, 64]; "
    "v: f16[8, 128, 64]",
]
