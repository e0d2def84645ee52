"""Winograd's minimal filtering F(m, r) as exact matrices, and straight-line C for applying them.

F(m, r) computes m outputs of an r-tap correlation, y[i] = sum_k g[k] d[i + k], from a = m + r - 1
inputs with a multiplications: y = A^T [(G g) * (B^T d)]. It is the transpose of the polynomial
product (a degree m-1 polynomial times g) evaluated at a points and interpolated back:
with Va, Vg, V the evaluation matrices of polynomials with m, r and a coefficients at the
points (the point at infinity picks the leading coefficient), A^T = Va^T, G = Vg and
B^T = V^-T. Each row of B^T is then scaled to small coprime integers and the matching row of G
divided by the same factor, which changes nothing exactly and keeps the transforms cheap.

The points are 0, 1, -1, 2, -2, 1/2, -1/2 and infinity (the usual choice, smallest rounding error
for up to 8 points); 2-D tiles apply the 1-D matrices along each axis. Everything here is exact
(Fractions); the kernels get the coefficients as float literals, all of them exactly
representable (small integers, halves, quarters, ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

FINITE_POINTS = (Fraction(0), Fraction(1), Fraction(-1), Fraction(2), Fraction(-2), Fraction(1, 2),
                 Fraction(-1, 2))
MAX_POINTS = len(FINITE_POINTS) + 1   # a = m + r - 1 points at most

Matrix = tuple[tuple[Fraction, ...], ...]


@dataclass(frozen=True)
class Transform:
    """F(m, r): at (m x a), g (a x r), bt (a x a)."""
    m: int
    r: int
    at: Matrix
    g: Matrix
    bt: Matrix

    @property
    def points(self) -> int:
        return self.m + self.r - 1


def _evaluation(points: int, coefficients: int) -> list[list[Fraction]]:
    """Rows: the finite points then infinity; columns: powers 0..coefficients-1."""
    rows = [[p ** j for j in range(coefficients)] for p in FINITE_POINTS[: points - 1]]
    rows.append([Fraction(int(j == coefficients - 1)) for j in range(coefficients)])
    return rows


def _inverse(matrix: list[list[Fraction]]) -> list[list[Fraction]]:
    n = len(matrix)
    work = [row[:] + [Fraction(int(i == j)) for j in range(n)] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = next(r for r in range(col, n) if work[r][col] != 0)
        work[col], work[pivot] = work[pivot], work[col]
        scale = work[col][col]
        work[col] = [v / scale for v in work[col]]
        for r in range(n):
            if r != col and work[r][col] != 0:
                factor = work[r][col]
                work[r] = [a - factor * b for a, b in zip(work[r], work[col])]
    return [row[n:] for row in work]


def _integer_scale(row: list[Fraction]) -> Fraction:
    """The factor that turns `row` into coprime integers."""
    denominators = math.lcm(*(v.denominator for v in row))
    numerators = math.gcd(*(int(v * denominators) for v in row))
    return Fraction(denominators, numerators or 1)


@lru_cache(maxsize=None)
def transform(m: int, r: int) -> Transform:
    """F(m, r) for m, r >= 1 with m + r - 1 <= MAX_POINTS (F(m, 1) and F(1, r) included)."""
    a = m + r - 1
    if m < 1 or r < 1 or a > MAX_POINTS:
        raise ValueError(f"F({m}, {r}) needs {a} points; at most {MAX_POINTS} are defined")
    if a == 1:
        one = ((Fraction(1),),)
        return Transform(m, r, one, one, one)
    va, vg, v = _evaluation(a, m), _evaluation(a, r), _evaluation(a, a)
    bt = [list(col) for col in zip(*_inverse(v))]   # V^-T
    g = [row[:] for row in vg]
    for i, row in enumerate(bt):
        s = _integer_scale(row)
        bt[i] = [x * s for x in row]
        g[i] = [x / s for x in g[i]]
    at = [list(col) for col in zip(*va)]
    return Transform(m, r, tuple(map(tuple, at)), tuple(map(tuple, g)), tuple(map(tuple, bt)))


def _literal(value: Fraction) -> str:
    text = repr(float(value))
    return text + ("f" if "e" in text or "." in text else ".0f")


def apply_code(matrix: Matrix, source: str, target: str) -> list[str]:
    """Statements `target(i) = sum_j matrix[i][j] * source(j)` with `{i}`/`{j}` placeholders filled,
    zero terms left out and unit coefficients as additions or subtractions (exact either way)."""
    lines = []
    for i, row in enumerate(matrix):
        terms = []
        for j, c in enumerate(row):
            if c == 0:
                continue
            value = source.format(j=j)
            if abs(c) == 1:
                terms.append(("-" if c < 0 else "+", value))
            else:
                terms.append(("-" if c < 0 else "+", f"{_literal(abs(c))} * {value}"))
        if not terms:
            expr = "0.0f"
        else:
            expr = ("-" if terms[0][0] == "-" else "") + terms[0][1]
            expr += "".join(f" {sign} {value}" for sign, value in terms[1:])
        lines.append(f"{target.format(i=i)} = {expr};")
    return lines
