"""Statement-level options (`arch=sm_90`, `goal=throughput`, ...): their keys and validation.

Values are stored in `Program.options` as canonical strings: `arch` as an `sm_XY` name (with
`gpu` keeping a named GPU such as "H200", whose figures differ from the arch's default GPU),
`accumulate`/`precision` as canonical dtype names, except `precision=tf32`, which keeps f32 data
and lets f32 matrix products round their operands to TF32 on tensor cores (opt-in only).
"""
from __future__ import annotations

import re

from ..arch import is_arch_name, resolve
from ..ir.dtypes import ALIASES, parse_dtype
from .errors import did_you_mean

OPTION_KEYS = ("arch", "gpu", "name", "goal", "budget", "accumulate", "layout", "precision", "hints")
GOALS = ("throughput", "latency", "registers")
TF32 = "tf32"   # precision=tf32: an f32 intent whose products may run on tensor cores in TF32
LAYOUTS = ("row", "col")


def normalize_option(key: str, value: str) -> dict[str, str]:
    """The options that `key=value` sets, canonicalized. Raises ValueError saying what is wrong."""
    value = value.strip().strip("'\"").strip()
    if not value:
        raise ValueError(f"option {key}= needs a value")
    if key in ("arch", "gpu"):
        try:
            spec = resolve(value)
        except KeyError as e:
            raise ValueError(str(e.args[0])) from None
        return {"arch": spec.name, **({} if is_arch_name(value) else {"gpu": value})}
    if key == "name":
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            raise ValueError(f"name={value} is not a C identifier")
        return {"name": value}
    if key == "goal":
        if value.lower() not in GOALS:
            raise ValueError(f"unknown goal '{value}' (expected {', '.join(GOALS)})"
                             + did_you_mean(value, GOALS))
        return {"goal": value.lower()}
    if key == "budget":
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"budget={value} must be a positive number of evaluations")
        return {"budget": str(int(value))}
    if key == "precision" and value.lower() == TF32:   # f32 products on tensor cores, operands rounded
        return {"precision": TF32}
    if key in ("accumulate", "precision"):
        dtype = parse_dtype(value)
        if dtype is None or not dtype.is_float:
            raise ValueError(f"unknown floating dtype '{value}'" + did_you_mean(value, ALIASES))
        return {key: dtype.name}
    if key == "layout":
        if value.lower() not in LAYOUTS:
            raise ValueError(f"layout must be row or col, got '{value}'")
        return {"layout": value.lower()}
    if key == "hints":
        return {"hints": value}
    raise ValueError(f"unknown option '{key}'" + did_you_mean(key, OPTION_KEYS))


def merge_options(options: dict[str, str], new: dict[str, str]) -> None:
    """`options.update(new)`, except that a new `arch` without a named GPU drops the old GPU."""
    if "arch" in new and "gpu" not in new:
        options.pop("gpu", None)
    options.update(new)
