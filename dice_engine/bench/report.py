"""benchmarks/RESULTS.md and the JSON file: the table, the machine, and the targets."""
from __future__ import annotations

import json
import math
from typing import Any

from ..runner.metrics import Ceilings
from .suite import BenchRow

TARGETS = {"geomean_speedup": 1.0, "memory_bound_copy_fraction": 0.85, "gemm_f32_of_library": 0.80,
           "gemm_low_precision_of_library": 0.60}


def _fmt(value: float | None, spec: str) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summary(rows: list[BenchRow], ceilings: Ceilings | None) -> dict[str, Any]:
    """The issue's targets, each with the figure reached and the cases that miss it."""
    timed = [r for r in rows if r.correct and r.speedup]
    out: dict[str, Any] = {"cases": len(rows), "correct": sum(r.correct for r in rows),
                           "geomean_speedup_vs_eager": geomean([r.speedup for r in timed if r.speedup]),
                           "geomean_speedup_vs_compile": geomean([r.compiled_us / r.dice_us for r in timed
                                                                  if r.compiled_us and r.dice_us])}
    if ceilings is not None:
        memory = [r for r in timed if r.bound == "memory" and r.gbps]
        out["memory_bound_below_target"] = [
            (r.case, round(r.gbps / ceilings.copy_gbps, 3)) for r in memory
            if r.gbps / ceilings.copy_gbps < TARGETS["memory_bound_copy_fraction"]]
        gemm = [r for r in timed if r.bound == "compute" and r.roofline_fraction is not None]
        out["gemm_below_target"] = [
            (r.case, round(r.roofline_fraction or 0.0, 3)) for r in gemm
            if (r.roofline_fraction or 0.0) < (TARGETS["gemm_f32_of_library"] if r.dtype == "f32"
                                               else TARGETS["gemm_low_precision_of_library"])]
    return out


def to_markdown(rows: list[BenchRow], meta: dict[str, Any]) -> str:
    ceilings: Ceilings | None = meta.get("ceilings_obj")
    s = summary(rows, ceilings)
    lines = [
        "# DICE benchmark results",
        "",
        f"- date: {meta['date']}",
        f"- GPU: {meta['gpu']} ({meta['arch']}), driver {meta['driver']}; torch {meta.get('torch', '?')}",
    ]
    if ceilings is not None:
        rates = ", ".join(f"{k} {v:.0f}" for k, v in ceilings.gemm_tflops.items())
        lines.append(f"- measured ceilings: device copy {ceilings.copy_gbps:,.0f} GB/s (read + write); "
                     f"library GEMM 4096³ TFLOP/s: {rates} (f32 without TF32)")
    lines += [
        "- method: every time is the median of CUDA-event timings of the kernel alone after warm-up, "
        "with a write of twice the L2 size before each run; DICE and PyTorch are timed in the same run "
        "the same way. PyTorch f32 runs without TF32 (matmul and cuDNN), as DICE's f32 kernels do.",
        "- DICE: each case's sketches at their default points plus single-token neighbours, screened on "
        "one trial, the fastest verified against the float64 reference on fresh random inputs "
        f"({meta.get('trials', 5)} trials).",
        "- roofline: the time floor from the measured ceilings (bytes over copy bandwidth, or GEMM work "
        "over the library rate) divided by the measured time.",
        "",
        "| case | shape | dtype | DICE µs | PyTorch µs | speedup | torch.compile µs | GB/s | TFLOP/s "
        "| roofline | correct | sketch |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for r in rows:
        compiled = _fmt(r.compiled_us, ".1f") if r.compiled_us else ("—" if not r.compile_note else "n/a")
        cells = [r.case, r.shape, r.dtype, _fmt(r.dice_us, ".1f"), _fmt(r.torch_us, ".1f"),
                 _fmt(r.speedup, ".2f"), compiled, _fmt(r.gbps, ",.0f"), _fmt(r.tflops, ".1f"),
                 _fmt(r.roofline_fraction, ".0%"), "yes" if r.correct else f"NO: {r.verdict}",
                 r.sketch or "—"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Targets", "",
              f"- correct: {s['correct']} of {s['cases']} cases",
              f"- geometric-mean speedup over PyTorch eager: {_fmt(s['geomean_speedup_vs_eager'], '.2f')} "
              f"(target ≥ {TARGETS['geomean_speedup']})"]
    if s.get("geomean_speedup_vs_compile"):
        lines.append(f"- geometric-mean speedup over torch.compile (where it ran): "
                     f"{s['geomean_speedup_vs_compile']:.2f}")
    if ceilings is not None:
        target = TARGETS["memory_bound_copy_fraction"]
        lines.append(f"- memory-bound cases under {target:.0%} of copy bandwidth: "
                     + (", ".join(f"{c} ({f:.0%})" for c, f in s["memory_bound_below_target"]) or "none"))
        lines.append("- GEMM cases under target (f32 80%, f16/bf16 60% of the library rate): "
                     + (", ".join(f"{c} ({f:.0%})" for c, f in s["gemm_below_target"]) or "none"))
    failures = [r for r in rows if not r.correct]
    if failures:
        lines += ["", "## Not verified", ""] + [f"- {r.case}: {r.verdict}: {r.detail}" for r in failures]
    return "\n".join(lines) + "\n"


def to_json(rows: list[BenchRow], meta: dict[str, Any]) -> str:
    ceilings: Ceilings | None = meta.get("ceilings_obj")
    public = {k: v for k, v in meta.items() if k != "ceilings_obj"}
    if ceilings is not None:
        public["ceilings"] = {"copy_gbps": ceilings.copy_gbps, "gemm_tflops": ceilings.gemm_tflops}
    return json.dumps({"meta": public, "summary": summary(rows, ceilings),
                       "rows": [r.to_json() for r in rows]}, indent=1)
