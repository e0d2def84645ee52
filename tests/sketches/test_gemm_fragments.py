"""The tensor-core GEMM's ldmatrix addressing, checked against the PTX ISA without a GPU.

The lane → shared-memory-row expressions are evaluated as written in the generated CUDA; the
ldmatrix delivery rule (lanes 8i..8i+7 address the rows of matrix i; lane t receives row t/4,
columns 2(t%4), 2(t%4)+1 of each matrix, or the transpose with .trans) then says which
logical element lands in which register, which must be what mma.m16n8k16 expects.
"""
from __future__ import annotations

import itertools
import re

import pytest

from dice_engine.arch import ARCHS
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.sketches import gemm_tc
from dice_engine.sketches.gemm_tc import LDMATRIX_ROWS


def c_eval(expr: str, **env: int) -> int:
    """A C integer expression over non-negative ints, evaluated in Python."""
    assert re.fullmatch(r"[\w\s+*/%()]+", expr), expr
    return int(eval(expr.replace("/", "//"), {}, env))   # noqa: S307 (trusted table)


def delivered(which: str, layout: str, **env: int) -> dict[tuple[int, int, int], tuple[str, int, str, int]]:
    """(lane, register, half) → the logical element it holds, e.g. ("m", 3, "k", 10)."""
    rows = LDMATRIX_ROWS[(which, layout)]
    address = [(c_eval(rows.outer, lane=lane, **env), c_eval(rows.inner, lane=lane, **env))
               for lane in range(32)]
    # shared-memory tile (row, column) → logical names: tiles keep their global layout
    names = {("A", "row"): ("m", "k"), ("A", "col"): ("k", "m"),
             ("B", "row"): ("k", "n"), ("B", "col"): ("n", "k")}[(which, layout)]
    out = {}
    for lane, reg, half in itertools.product(range(32), range(4), range(2)):
        r, c = (2 * (lane % 4) + half, lane // 4) if rows.trans else (lane // 4, 2 * (lane % 4) + half)
        row, col0 = address[8 * reg + r]
        out[(lane, reg, half)] = (names[0], row, names[1], col0 + c)
    return out


@pytest.mark.parametrize("layout", ["row", "col"])
@pytest.mark.parametrize("kk,mi,warp_m0", [(0, 0, 0), (1, 2, 64)])
def test_a_fragments_match_mma_m16n8k16(layout, kk, mi, warp_m0):
    got = delivered("A", layout, kk=kk, mi=mi, warp_m0=warp_m0)
    for (lane, reg, half), element in got.items():
        g, t = lane // 4, lane % 4
        m = warp_m0 + mi * 16 + g + 8 * (reg % 2)
        k = kk * 16 + 2 * t + half + 8 * (reg // 2)
        assert dict([element[:2], element[2:]]) == {"m": m, "k": k}, (lane, reg, half)


@pytest.mark.parametrize("layout", ["row", "col"])
@pytest.mark.parametrize("kk,ni,warp_n0", [(0, 0, 0), (1, 6, 32)])
def test_b_fragment_pairs_match_mma_m16n8k16(layout, kk, ni, warp_n0):
    got = delivered("B", layout, kk=kk, ni=ni, warp_n0=warp_n0)
    for (lane, reg, half), element in got.items():
        g, t = lane // 4, lane % 4
        fragment, b_reg = ni + reg // 2, reg % 2     # r[0..1] → b_frag[ni], r[2..3] → b_frag[ni + 1]
        k = kk * 16 + 2 * t + half + 8 * b_reg
        n = warp_n0 + fragment * 8 + g
        assert dict([element[:2], element[2:]]) == {"k": k, "n": n}, (lane, reg, half)


@pytest.mark.parametrize("which,layout", list(LDMATRIX_ROWS))
@pytest.mark.parametrize("pitch", [40, 72, 136, 264])   # BK or BM/BN of 32, 64, 128, 256 plus 8
def test_each_ldmatrix_phase_hits_eight_distinct_bank_groups(which, layout, pitch):
    rows = LDMATRIX_ROWS[(which, layout)]
    env = {"kk": 1, "mi": 1, "ni": 2, "warp_m0": 32, "warp_n0": 32}
    for matrix in range(4):
        byte_addresses = []
        for lane in range(8 * matrix, 8 * matrix + 8):
            row, col = c_eval(rows.outer, lane=lane, **env), c_eval(rows.inner, lane=lane, **env)
            byte_addresses.append(2 * (row * pitch + col))
        assert len({(a // 16) % 8 for a in byte_addresses}) == 8, byte_addresses


@pytest.mark.parametrize("text,a_fn,b_fn", [
    ("C = A @ B; A: f16[256, 256]; B: f16[256, 256]", "ldmatrix_x4(a_frag", "ldmatrix_x4_trans(r"),
    ("C = A.T @ B.T; A: f16[256, 256]; B: f16[256, 256]", "ldmatrix_x4_trans(a_frag", "ldmatrix_x4(r"),
])
def test_rendered_kernel_uses_the_table(text, a_fn, b_fn):
    problem = classify(parse_intent(text))
    sketch = gemm_tc.SKETCHES[0]
    arch = ARCHS["sm_80"]
    source = sketch.render(problem, arch, sketch.default_point(problem, arch), "frag_check").source
    gp_layouts = ("row", "row") if "A.T" not in text else ("col", "col")
    for which, layout in zip("AB", gp_layouts):
        rows = LDMATRIX_ROWS[(which, layout)]
        assert f"const int row = {rows.outer}, col = {rows.inner};" in source
    assert a_fn in source and b_fn in source
    # accumulator fragment: rows g and g+8, column pairs 2(lane%4) (PTX m16n8 f32 C layout)
    assert "lane / 4 + upper * 8" in source and "(lane % 4) * 2" in source


def test_sm75_splits_k16_into_two_k8_mmas_in_fragment_order():
    problem = classify(parse_intent("C = A @ B; A: f16[256, 256]; B: f16[256, 256]"))
    sketch = gemm_tc.SKETCHES[0]
    arch = ARCHS["sm_75"]
    source = sketch.render(problem, arch, sketch.default_point(problem, arch), "k8_check").source
    assert source.count("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32") == 2
    assert '"r"(a[0]), "r"(a[1]), "r"(b[0])' in source and '"r"(a[2]), "r"(a[3]), "r"(b[1])' in source
    assert "mma.sync.aligned.m16n8k16" not in source
