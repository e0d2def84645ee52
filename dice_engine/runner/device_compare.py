"""`compare.compare` done with torch where the output lives: the same checks (unwritten
elements, NaN, error measures per pattern, exact integers with argmax/argmin ties), the same
verdicts and messages; only a few scalars come back to the host."""
from __future__ import annotations

import numpy as np
import torch

from ..ir.dtypes import DType
from .compare import Comparison, Tolerance, verdict
from .device_reference import torch_dtype

# signed integers of each width: all-ones (the poison) is -1 in every one of them
_WORDS = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _index(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def output_values(raw: torch.Tensor, dtype: DType) -> torch.Tensor:
    """The output bytes (a uint8 tensor) as values of `dtype` (bool: any nonzero byte)."""
    if dtype.name == "bool":
        return raw != 0
    return raw.view(torch_dtype(dtype))


def compare_on_device(raw: torch.Tensor, ref: torch.Tensor, dtype: DType, tol: Tolerance,
                      tie_values: torch.Tensor | None = None, tie_dim: int | None = None) -> Comparison:
    """Compare the output bytes `raw` (uint8, flat) with the reference `ref` (rounded to `dtype`)."""
    shape = tuple(ref.shape)
    width = torch_dtype(dtype).itemsize if dtype.name != "bool" else 1
    words = raw.view(_WORDS[width])
    poisoned = words == -1
    if bool(poisoned.any()):   # rare: only then is the reference's own bit pattern looked at
        ref_bits = ref.to(torch.uint8) if dtype.name == "bool" else ref.contiguous()
        poisoned &= ref_bits.reshape(-1).view(_WORDS[width]) != -1
        count = int(poisoned.sum())
        if count:
            first = _index(int(torch.argmax(poisoned.to(torch.uint8))), shape)
            return Comparison("unwritten", None, f"{count} of {poisoned.numel()} output elements were not "
                                                 f"written (first at index {first})")
    out = output_values(raw, dtype).reshape(shape)
    if tol.mode == "exact":
        return _compare_exact(out, ref, tie_values, tie_dim)
    work = torch.float64 if dtype.name == "f64" else torch.float32
    got, want = out.to(work), ref.to(work)
    nan = torch.isnan(got)
    if bool(nan.any()):
        first = _index(int(torch.argmax(nan.to(torch.uint8))), shape)
        return Comparison("mismatch", float("inf"), f"{int(nan.sum())} NaN outputs (first at index {first})")
    if got.numel() == 0:
        return verdict(0.0, tol, "")
    diff = (got - want).abs_()
    del got
    if tol.mode == "normwise":
        scale = max(float(torch.linalg.vector_norm(want, dtype=torch.float64)), 1e-30)
        err = float(torch.linalg.vector_norm(diff, dtype=torch.float64)) / scale
        return verdict(err, tol, f"largest difference at index {_index(int(torch.argmax(diff)), shape)}")
    rms = float(torch.sqrt(torch.sum(torch.square(want), dtype=torch.float64) / want.numel()))
    floor = (1e-3 * rms if tol.mode == "elementwise" else rms) + 1e-30
    rel = diff.div_(want.abs().add_(floor))
    flat = int(torch.argmax(rel))
    worst = _index(flat, shape)
    detail = (f"worst at index {worst}: got {float(out.reshape(-1)[flat].to(work))!r}, "
              f"expected {float(want.reshape(-1)[flat])!r}")
    return verdict(float(rel.reshape(-1)[flat]), tol, detail)


def _compare_exact(out: torch.Tensor, ref: torch.Tensor, tie_values: torch.Tensor | None,
                   tie_dim: int | None) -> Comparison:
    wrong = out != ref
    if bool(wrong.any()) and tie_values is not None and tie_dim is not None:
        wrong &= ~_ties(out, ref, tie_values, tie_dim)
    count = int(wrong.sum())
    if count:
        flat = int(torch.argmax(wrong.to(torch.uint8)))
        where = _index(flat, tuple(ref.shape))
        got, want = out.reshape(-1)[flat].item(), ref.reshape(-1)[flat].item()
        return Comparison("mismatch", 1.0, f"{count} of {wrong.numel()} elements differ "
                                           f"(first at index {where}: got {got}, expected {want})")
    return Comparison("ok", 0.0, "exact match")


def _ties(out: torch.Tensor, ref: torch.Tensor, values: torch.Tensor, dim: int) -> torch.Tensor:
    """Where the index `out` names an element equal to the one `ref` names (an equally good pick)."""
    size = values.shape[dim]
    idx_out = out.unsqueeze(dim) if out.ndim < values.ndim else out
    idx_ref = ref.unsqueeze(dim) if ref.ndim < values.ndim else ref
    in_range = (idx_out >= 0) & (idx_out < size)
    picked = torch.gather(values, dim, idx_out.clamp(0, size - 1).to(torch.int64))
    best = torch.gather(values, dim, idx_ref.to(torch.int64))
    return ((picked == best) & in_range).reshape(out.shape)
