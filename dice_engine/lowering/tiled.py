"""The shared-memory tiled schedule of GEMM-shaped stages (matmuls, implicit-GEMM convolutions).

A block owns a tile×tile output tile (M rows × N columns, see `stages.Contraction`) of one
batch index; the reduction domain K advances `TILE_K` at a time: the block stages the lhs slice
[TILE_K × tile] and the rhs slice [TILE_K × tile] in shared memory (each element computed once
through `Body`, so fused producers, padding and transposed-convolution gaps are applied while
loading), then every thread accumulates an r×c register micro-tile from them. Operands are read
from DRAM/L2 tile/2 times less often than by a thread per output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..ir.graph import Program
from ..sketches.base import numel_c
from ..sketches.body import Body, Index, Source
from .ctext import decompose, indent
from .stages import Stage

TILE_K = 16  # reduction-domain elements staged per step
PAD = 1  # a column of padding keeps the lhs/rhs tiles free of bank conflicts

Store = Callable[[Index, str], list[str]]  # (output index names, accumulator) → C lines


@dataclass(frozen=True)
class Micro:
    """How `threads` threads cover a tile×tile output tile: each a rows×cols micro-tile whose
    rows are `ty + ty_count*i` and columns `tx + tx_count*j` (strided: conflict-free reads)."""

    rows: int
    cols: int
    tx_count: int
    ty_count: int


def micro(tile: int, threads: int) -> Micro | None:
    per = tile * tile // threads
    if per < 1 or tile * tile % threads:
        return None
    cols = 1
    while cols * cols * 4 <= per:
        cols *= 2
    rows = per // cols
    tx = tile // cols
    if tx < 1 or threads % tx or threads // tx != tile // rows:
        return None
    return Micro(rows, cols, tx, threads // tx)


def smem_bytes(tile: int, ctype_bytes: int) -> int:
    return 2 * TILE_K * (tile + PAD) * ctype_bytes


def dims(stage: Stage) -> tuple[list[int], list[int], int]:
    """The batch dims, the M dims (output order) and the N dim of a contraction stage."""
    c = stage.contraction
    assert c is not None
    m = [d for d in range(stage.node.rank) if d not in c.batch and d != c.n_dim]
    return list(c.batch), m, c.n_dim


def tile_count(stage: Stage, tile: int) -> str:
    """The number of (batch, M tile, N tile) blocks, a 64-bit C expression."""
    batch, m, n = dims(stage)
    shape = stage.node.shape
    mt = f"(({numel_c(tuple(shape[d] for d in m))} + {tile - 1}LL) / {tile}LL)"
    nt = f"(({numel_c((shape[n],))} + {tile - 1}LL) / {tile}LL)"
    return f"{numel_c(tuple(shape[d] for d in batch))} * {mt} * {nt}"


def hint_tiles(stage: Stage, program: Program, tile: int) -> int:
    batch, m, n = dims(stage)
    shape = program.concrete_shape(stage.node.shape)
    count = -(-_prod(shape[d] for d in m) // tile) * -(-shape[n] // tile)
    return count * _prod(shape[d] for d in batch)


def _prod(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def _operand_load(
    stage: Stage, side: str, tile: int, ctype: str, sources: dict[int, Source], threads: int
) -> list[str]:
    """Lines that fill `dz_as` (lhs) or `dz_bs` (rhs) for the step at `dz_k0`."""
    c = stage.contraction
    assert c is not None
    batch, m, n = dims(stage)
    rank = stage.node.rank
    k_fastest = c.lhs_k_fastest if side == "lhs" else c.rhs_k_fastest
    own = m if side == "lhs" else [n]
    extent = "dz_M" if side == "lhs" else "dz_N"
    base = "dz_mb" if side == "lhs" else "dz_nb"
    target = "dz_as" if side == "lhs" else "dz_bs"
    names = [f"dz_i{d}" if d in batch or d in own else "0" for d in range(rank)]
    ridx = tuple(f"dz_r{k}" for k in range(len(stage.extents)))
    body = Body(ctype, sources, prefix="l" if side == "lhs" else "q")
    value = (c.lhs if side == "lhs" else c.rhs)(body, tuple(names), ridx)
    skip = c.lhs_skip(tuple(names), ridx) if side == "lhs" else None
    split = (
        ["const int dz_kk = dz_e % " + str(TILE_K) + ", dz_mm = dz_e / " + str(TILE_K) + ";"]
        if k_fastest
        else [f"const int dz_kk = dz_e / {tile}, dz_mm = dz_e % {tile};"]
    )
    own_shape = tuple(stage.node.shape[d] for d in own)
    inner = decompose(f"({base} + dz_mm)", [f"dz_i{d}" for d in own], own_shape, "dz_ro") + decompose(
        "(dz_k0 + dz_kk)", list(ridx), stage.extents, "dz_rr"
    )
    compute = body.lines + [f"dz_v = {value};"]
    if skip:
        compute = [f"if (!({skip})) {{", *indent(compute, 1), "}"]
    return [
        f"for (int dz_e = threadIdx.x; dz_e < {TILE_K * tile}; dz_e += {threads}) {{",
        *indent(
            split
            + [
                f"{ctype} dz_v = 0;",
                f"if ({base} + dz_mm < {extent} && dz_k0 + dz_kk < dz_K) {{",
                *indent(inner + compute, 1),
                "}",
                f"{target}[dz_kk][dz_mm] = dz_v;",
            ],
            1,
        ),
        "}",
    ]


def tiled_text(
    signature: str,
    ctype: str,
    sources: dict[int, Source],
    stage: Stage,
    kernel: str,
    tile: int,
    threads: int,
    store: Store,
) -> str:
    mt = micro(tile, threads)
    assert mt is not None
    batch, m, n = dims(stage)
    shape = stage.node.shape
    acc = f"dz_c[{mt.rows}][{mt.cols}]"
    # consecutive lanes along the output's contiguous axis: N for a matmul, M for a convolution
    # (its M ends with the innermost output position), so stores coalesce
    if n == stage.node.rank - 1:
        lanes = f"dz_tx = threadIdx.x % {mt.tx_count}, dz_ty = threadIdx.x / {mt.tx_count}"
    else:
        lanes = f"dz_ty = threadIdx.x % {mt.ty_count}, dz_tx = threadIdx.x / {mt.ty_count}"
    lines = [
        f"__global__ void __launch_bounds__({threads}) {kernel}({signature}) {{",
        f"    __shared__ {ctype} dz_as[{TILE_K}][{tile + PAD}];",
        f"    __shared__ {ctype} dz_bs[{TILE_K}][{tile + PAD}];",
        f"    const long long dz_M = {numel_c(tuple(shape[d] for d in m))};",
        f"    const long long dz_N = {numel_c((shape[n],))};",
        f"    const long long dz_K = {numel_c(stage.extents)};",
        f"    const long long dz_mt = (dz_M + {tile - 1}) / {tile}, dz_nt = (dz_N + {tile - 1}) / {tile};",
        f"    const long long dz_tiles = {numel_c(tuple(shape[d] for d in batch))} * dz_mt * dz_nt;",
        f"    const int {lanes};",
        "    for (long long dz_tile = blockIdx.x; dz_tile < dz_tiles; dz_tile += gridDim.x) {",
    ]
    body = [
        "const long long dz_nb = (dz_tile % dz_nt) * " + str(tile) + ";",
        "const long long dz_mb = ((dz_tile / dz_nt) % dz_mt) * " + str(tile) + ";",
        "const long long dz_b = dz_tile / (dz_nt * dz_mt);",
    ]
    body += decompose("dz_b", [f"dz_i{d}" for d in batch], tuple(shape[d] for d in batch), "dz_rb")
    body += [
        f"{ctype} {acc};",
        "#pragma unroll",
        f"for (int dz_y = 0; dz_y < {mt.rows}; ++dz_y)",
        "    #pragma unroll",
        f"    for (int dz_x = 0; dz_x < {mt.cols}; ++dz_x) dz_c[dz_y][dz_x] = 0;",
        f"for (long long dz_k0 = 0; dz_k0 < dz_K; dz_k0 += {TILE_K}) {{",
    ]
    step = _operand_load(stage, "lhs", tile, ctype, sources, threads)
    step += _operand_load(stage, "rhs", tile, ctype, sources, threads)
    step += [
        "__syncthreads();",
        "#pragma unroll",
        f"for (int dz_kk = 0; dz_kk < {TILE_K}; ++dz_kk) {{",
        f"    {ctype} dz_a[{mt.rows}], dz_w[{mt.cols}];",
        "    #pragma unroll",
        f"    for (int dz_y = 0; dz_y < {mt.rows}; ++dz_y)",
        f"        dz_a[dz_y] = dz_as[dz_kk][dz_ty + {mt.ty_count} * dz_y];",
        "    #pragma unroll",
        f"    for (int dz_x = 0; dz_x < {mt.cols}; ++dz_x)",
        f"        dz_w[dz_x] = dz_bs[dz_kk][dz_tx + {mt.tx_count} * dz_x];",
        "    #pragma unroll",
        f"    for (int dz_y = 0; dz_y < {mt.rows}; ++dz_y)",
        "        #pragma unroll",
        f"        for (int dz_x = 0; dz_x < {mt.cols}; ++dz_x) dz_c[dz_y][dz_x] += dz_a[dz_y] * dz_w[dz_x];",
        "}",
        "__syncthreads();",
    ]
    body += indent(step, 1) + ["}"]
    idx = tuple(f"dz_i{d}" for d in range(stage.node.rank))
    out = (
        decompose(
            f"(dz_mb + dz_ty + {mt.ty_count} * dz_y)",
            [f"dz_i{d}" for d in m],
            tuple(shape[d] for d in m),
            "dz_ro",
        )
        + [
            f"const long long dz_i{n} = dz_nb + dz_tx + {mt.tx_count} * dz_x;",
            f"const {ctype} dz_acc = dz_c[dz_y][dz_x];",
        ]
        + store(idx, "dz_acc")
    )
    body += [
        "#pragma unroll",
        f"for (int dz_y = 0; dz_y < {mt.rows}; ++dz_y) {{",
        "    #pragma unroll",
        f"    for (int dz_x = 0; dz_x < {mt.cols}; ++dz_x) {{",
        f"        if (dz_mb + dz_ty + {mt.ty_count} * dz_y >= dz_M"
        f" || dz_nb + dz_tx + {mt.tx_count} * dz_x >= dz_N) continue;",
        *indent(out, 2),
        "    }",
        "}",
    ]
    lines += indent(body, 2) + ["    }", "}"]
    return "\n".join(lines)
