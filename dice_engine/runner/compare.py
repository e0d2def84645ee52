"""Output checks: unwritten elements (the poison pattern survived), then agreement with the
reference at a tolerance chosen by dtype and pattern.

Error measures, by what the output is:
- elementwise and transpose (one rounding per element): |out - ref| / (|ref| + 1e-3·rms(ref));
- reductions, softmax, norms, scans, pools (sums of many terms): |out - ref| / (|ref| + rms(ref));
- GEMM and convolution: ‖out - ref‖ / ‖ref‖ over the whole tensor;
- integer and bool outputs: exact, except that argmax/argmin may pick any index holding the
  extreme value (ties are real with rounded random inputs).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.dtypes import DType
from ..ir.patterns import Problem
from ..ir.reference import from_storage, to_storage

POISON_BYTE = 0xFF    # all-ones: NaN for every float dtype, -1 / 255 for integers


@dataclass(frozen=True)
class Tolerance:
    mode: str     # "elementwise" | "scaled" | "normwise" | "exact"
    limit: float


@dataclass
class Comparison:
    verdict: str              # "ok" | "mismatch" | "unwritten"
    max_rel_err: float | None
    detail: str


def tolerance_for(problem: Problem) -> Tolerance:
    dtype = problem.program.output.dtype
    if not dtype.is_float:
        return Tolerance("exact", 0.0)
    low = dtype.is_low_precision or any(d.dtype.is_low_precision for d in problem.program.inputs.values())
    if problem.pattern in ("gemm", "conv2d"):
        return Tolerance("normwise", 1e-2 if low else 1e-4)
    if problem.pattern in ("elementwise", "transpose"):
        return Tolerance("elementwise", 1e-2 if low else 1e-5)
    return Tolerance("scaled", 1e-2 if low else 1e-4)


def unwritten_mask(raw: np.ndarray, ref: np.ndarray, dtype: DType) -> np.ndarray:
    """Elements whose bytes are still the poison pattern (and that the reference does not hold)."""
    size = raw.dtype.itemsize
    poisoned = (raw.reshape(-1).view(np.uint8).reshape(-1, size) == POISON_BYTE).all(axis=1)
    ref_is_poison = (to_storage(ref, dtype).reshape(-1).view(np.uint8).reshape(-1, size)
                     == POISON_BYTE).all(axis=1)
    return poisoned & ~ref_is_poison


def _first_index(mask: np.ndarray, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(mask)), shape))


def compare(raw: np.ndarray, ref: np.ndarray, dtype: DType, tol: Tolerance,
            tie_values: np.ndarray | None = None, tie_dim: int | None = None) -> Comparison:
    """Compare the device bytes `raw` (storage dtype) with the reference `ref`.

    For argmax/argmin outputs, `tie_values` is the reduced tensor and `tie_dim` the reduced dim."""
    shape = ref.shape
    unwritten = unwritten_mask(raw, ref, dtype).reshape(shape)
    if unwritten.any():
        return Comparison("unwritten", None,
                          f"{int(unwritten.sum())} of {unwritten.size} output elements were not written "
                          f"(first at index {_first_index(unwritten, shape)})")
    out = from_storage(raw.reshape(-1), dtype).reshape(shape)
    if tol.mode == "exact":
        return _compare_exact(out, ref, tie_values, tie_dim)
    out64, ref64 = out.astype(np.float64), ref.astype(np.float64)
    if np.isnan(out64).any():
        bad = np.isnan(out64)
        return Comparison("mismatch", float("inf"),
                          f"{int(bad.sum())} NaN outputs (first at index {_first_index(bad, shape)})")
    diff = np.abs(out64 - ref64)
    if tol.mode == "normwise":
        err = float(np.linalg.norm(diff) / max(np.linalg.norm(ref64), 1e-30))
        where = _first_index(diff == diff.max(), shape) if diff.size else ()
        return _verdict(err, tol, f"largest difference at index {where}")
    rms = float(np.sqrt(np.mean(ref64 ** 2))) if ref64.size else 0.0
    floor = (1e-3 * rms if tol.mode == "elementwise" else rms) + 1e-30
    rel = diff / (np.abs(ref64) + floor)
    worst = _first_index(rel == rel.max(), shape) if rel.size else ()
    err = float(rel.max()) if rel.size else 0.0
    detail = (f"worst at index {worst}: got {out64[worst]!r}, expected {ref64[worst]!r}" if rel.size else "")
    return _verdict(err, tol, detail)


def _verdict(err: float, tol: Tolerance, detail: str) -> Comparison:
    if err <= tol.limit:
        return Comparison("ok", err, f"max error {err:.2e} within {tol.limit:.0e} ({tol.mode})")
    return Comparison("mismatch", err, f"error {err:.2e} exceeds {tol.limit:.0e} ({tol.mode}); {detail}")


def _compare_exact(out: np.ndarray, ref: np.ndarray, tie_values: np.ndarray | None,
                   tie_dim: int | None) -> Comparison:
    wrong = out != ref
    if wrong.any() and tie_values is not None and tie_dim is not None:
        wrong &= ~_ties(out, ref, tie_values, tie_dim)
    if wrong.any():
        where = _first_index(wrong, ref.shape)
        return Comparison("mismatch", 1.0,
                          f"{int(wrong.sum())} of {wrong.size} elements differ "
                          f"(first at index {where}: got {out[where]}, expected {ref[where]})")
    return Comparison("ok", 0.0, "exact match")


def _ties(out: np.ndarray, ref: np.ndarray, values: np.ndarray, dim: int) -> np.ndarray:
    """Where the index `out` names an element equal to the one `ref` names (an equally good pick)."""
    size = values.shape[dim]
    idx_out = np.expand_dims(out, dim) if out.ndim < values.ndim else out
    idx_ref = np.expand_dims(ref, dim) if ref.ndim < values.ndim else ref
    in_range = (idx_out >= 0) & (idx_out < size)
    picked = np.take_along_axis(values, np.clip(idx_out, 0, size - 1).astype(np.int64), axis=dim)
    best = np.take_along_axis(values, idx_ref.astype(np.int64), axis=dim)
    same = (picked == best) & in_range
    return same.reshape(out.shape)
