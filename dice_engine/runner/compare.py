"""Output checks: unwritten elements (the poison pattern survived), then agreement with the
reference at a tolerance chosen by dtype and pattern.

Error measures, by what the output is:
- elementwise and transpose (one rounding per element): |out - ref| / (|ref| + 1e-3·rms(ref));
- reductions, softmax, norms, scans, pools (sums of many terms): |out - ref| / (|ref| + rms(ref));
- GEMM and convolution: ‖out - ref‖ / ‖ref‖ over the whole tensor (1e-4 for f32, 2e-3 under
  precision=tf32, 1e-2 for f16/bf16);
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
# precision=tf32 products round each operand to 10 mantissa bits (unit roundoff 2^-11 = 4.9e-4):
# their normwise error on random data is about 3e-4; 2e-3 leaves room for long K and epilogues.
TF32_NORMWISE = 2e-3


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
        if not low and problem.program.options.get("precision") == "tf32":
            return Tolerance("normwise", TF32_NORMWISE)
        return Tolerance("normwise", 1e-2 if low else 1e-4)
    if problem.pattern in ("elementwise", "transpose"):
        return Tolerance("elementwise", 1e-2 if low else 1e-5)
    return Tolerance("scaled", 1e-2 if low else 1e-4)


_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def unwritten_mask(raw: np.ndarray, ref: np.ndarray, dtype: DType) -> np.ndarray:
    """Elements whose bytes are still the poison pattern (and that the reference does not hold)."""
    word = _WORDS[raw.dtype.itemsize]
    ones = np.iinfo(word).max
    poisoned = raw.reshape(-1).view(word) == ones
    if poisoned.any():   # rare: only then is the reference's own bit pattern looked at
        poisoned &= to_storage(ref, dtype).reshape(-1).view(word) != ones
    return poisoned


def _index(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def compare(raw: np.ndarray, ref: np.ndarray, dtype: DType, tol: Tolerance,
            tie_values: np.ndarray | None = None, tie_dim: int | None = None) -> Comparison:
    """Compare the device bytes `raw` (storage dtype) with the reference `ref`.

    For argmax/argmin outputs, `tie_values` is the reduced tensor and `tie_dim` the reduced dim.
    Differences are taken in float32 for float32 and narrower outputs (exact for values this
    close) and in float64 for float64, so that checking a large tensor stays cheap."""
    shape = ref.shape
    unwritten = unwritten_mask(raw, ref, dtype)
    if unwritten.any():
        return Comparison("unwritten", None,
                          f"{int(unwritten.sum())} of {unwritten.size} output elements were not written "
                          f"(first at index {_index(int(np.argmax(unwritten)), shape)})")
    out = from_storage(raw.reshape(-1), dtype).reshape(shape)
    if tol.mode == "exact":
        return _compare_exact(out, ref, tie_values, tie_dim)
    work = np.float64 if dtype.name == "f64" else np.float32
    got, want = out.astype(work, copy=False), ref.astype(work, copy=False)
    bad = np.isnan(got)
    if bad.any():
        first = _index(int(np.argmax(bad)), shape)
        return Comparison("mismatch", float("inf"), f"{int(bad.sum())} NaN outputs (first at index {first})")
    diff = np.abs(got - want)
    if diff.size == 0:
        return verdict(0.0, tol, "")
    if tol.mode == "normwise":
        scale = max(float(np.linalg.norm(want.astype(np.float64))), 1e-30)
        err = float(np.linalg.norm(diff.astype(np.float64))) / scale
        return verdict(err, tol, f"largest difference at index {_index(int(np.argmax(diff)), shape)}")
    rms = float(np.sqrt(np.mean(np.square(want, dtype=np.float64))))
    floor = (1e-3 * rms if tol.mode == "elementwise" else rms) + 1e-30
    rel = diff / (np.abs(want) + work(floor))
    flat = int(np.argmax(rel))
    worst = _index(flat, shape)
    detail = f"worst at index {worst}: got {float(got[worst])!r}, expected {float(want[worst])!r}"
    return verdict(float(rel.reshape(-1)[flat]), tol, detail)


def verdict(err: float, tol: Tolerance, detail: str) -> Comparison:
    if err <= tol.limit:
        return Comparison("ok", err, f"max error {err:.2e} within {tol.limit:.0e} ({tol.mode})")
    return Comparison("mismatch", err, f"error {err:.2e} exceeds {tol.limit:.0e} ({tol.mode}); {detail}")


def _compare_exact(out: np.ndarray, ref: np.ndarray, tie_values: np.ndarray | None,
                   tie_dim: int | None) -> Comparison:
    wrong = out != ref
    if wrong.any() and tie_values is not None and tie_dim is not None:
        wrong &= ~_ties(out, ref, tie_values, tie_dim)
    if wrong.any():
        where = _index(int(np.argmax(wrong)), ref.shape)
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
