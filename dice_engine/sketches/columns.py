"""The column tiles of the `*.columns` sketches (reduction, softmax along a non-innermost axis of
a tensor viewed as [outer, reduced, inner]): a block of kTile x kSplit threads covers kTile * kVec
adjacent columns of one outer index, threadIdx.x along the kept inner axis (coalesced, kVec
columns each), threadIdx.y along the reduced axis, the kSplit partials of a column merged in
shared memory. The tokens, the prior's tile, the kernel's block-to-columns mapping and the
launcher's and launch's block counts must agree, so they live here together.
"""
from __future__ import annotations

from .base import Role, Token
from .warp import partials_row_pad, pow2_floor

# Kernel lines: block x's outer index `outer_idx` and this thread's first column `j0`.
COLUMN_INDEX = """\
    const long long tiles_per_outer = (inner + kTile * kVec - 1) / (kTile * kVec);
    const long long outer_idx = blockIdx.x / tiles_per_outer;
    const long long j0 = (blockIdx.x % tiles_per_outer * kTile + threadIdx.x) * kVec;"""

# Launcher line: the blocks along x, each covering kTile * kVec columns of one outer index.
COLUMN_TILES = ("const long long tiles = "
                "outer * ((inner + kn::kTile * kn::kVec - 1) / (kn::kTile * kn::kVec));")


def column_tokens(vec_width: int, split_doc: str) -> list[Token]:
    """The tile, split and vec tokens (`split_doc`: what the reduced axis is called)."""
    return [
        Token("tile", (16, 32, 64, 128, 256), "threads along the kept inner axis", (Role.THREADS,)),
        Token("split", (1, 2, 4, 8, 16, 32), split_doc, (Role.SPLIT,)),
        Token("vec", tuple(sorted({1, vec_width})), "adjacent columns per thread (16-byte packs)",
              (Role.VECTOR,)),
    ]


def column_tile(inner: int, vec: int) -> int:
    """The prior's tile: the power of two of threads at or below the (hinted) `inner` extent's
    packs, 16 to 128."""
    return min(128, max(16, pow2_floor(-(-inner // vec))))


def column_tiles(outer: int, inner: int, tile: int, vec: int) -> int:
    """The blocks along x for (hinted) `outer` and `inner` extents, as COLUMN_TILES counts them."""
    return outer * -(-inner // (tile * vec))


def column_partials(c_type: str, name: str, tile: int, vec: int, elem_bytes: int) -> str:
    """Kernel lines declaring the block's partials `name`, [kSplit][kVec * kTile] of `c_type`
    (`elem_bytes` each), written at [threadIdx.y][elem * kTile + threadIdx.x]."""
    pad = partials_row_pad(tile, vec, elem_bytes)
    return ("    // [part][elem][lane], rows padded so that lanes of a warp in different parts use other"
            " banks\n"
            f"    __shared__ {c_type} {name}[kSplit][kVec * kTile + {pad}];")
