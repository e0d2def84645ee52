"""What limits a GEMM: Nsight Compute on the kernel `dice generate` picks without a GPU and on
cuBLAS's kernel for the same product, side by side (issue 14 asks for it with the numbers).

    python benchmarks/gemm_profile.py [--cases kb1_square,kb3_batched] [--budget 4]
                                      [--out benchmarks/GEMM_PROFILE.md]

The cases and the picks are gemm_parity.py's (generated and compiled on the CPU first). A child
process then launches each pick once and torch.matmul once between cudaProfilerStart/Stop, under
`ncu --profile-from-start off --clock-control none` with the speed-of-light, occupancy,
scheduler, warp-state and pipe sections plus the per-reason stall ratios; warm-up launches happen
outside the profiled range. The table lists, per kernel, time, throughputs, occupancy, issue rate,
shared-memory bank conflicts and the three largest stall reasons (cycles a warp waits per issued
instruction). Raw metrics go to the JSON file beside the table.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gemm_parity  # noqa: E402

from dice_engine.runner.profiler import metric_rows, parse_metrics, run_ncu  # noqa: E402

PROG = "gemm_profile.py"
SECTIONS = (
    "SpeedOfLight",
    "LaunchStats",
    "Occupancy",
    "SchedulerStats",
    "WarpStateStats",
    "ComputeWorkloadAnalysis",
    "MemoryWorkloadAnalysis",
)
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"
STALL_REASONS = (
    "barrier",
    "branch_resolving",
    "dispatch_stall",
    "drain",
    "imc_miss",
    "lg_throttle",
    "long_scoreboard",
    "math_pipe_throttle",
    "membar",
    "mio_throttle",
    "misc",
    "no_instruction",
    "not_selected",
    "selected",
    "short_scoreboard",
    "sleeping",
    "tex_throttle",
    "wait",
)
EXTRA_METRICS = (
    *(STALL_PREFIX + r + STALL_SUFFIX for r in STALL_REASONS),
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
)
# table label -> the details page's name of the figure (Duration is read apart: its unit varies)
COLUMNS = {
    "SM %": "Compute (SM) Throughput",
    "DRAM %": "DRAM Throughput",   # (the memory section's "Memory Throughput" is in bytes/s: same name)
    "issue busy %": "Issue Slots Busy",
    "regs": "Registers Per Thread",
    "occ. %": "Achieved Occupancy",
    "IPC": "Executed Ipc Active",
    "cyc/issue": "Warp Cycles Per Issued Instruction",
}


def child_main(jobs_path: str, seed: int) -> int:
    """Launch each pick and its torch.matmul once inside the profiled range (after a warm-up)."""
    import torch

    from dice_engine.intent import parse_intent
    from dice_engine.runner.child import Launcher
    from dice_engine.runner.inputs import intent_bindings
    from dice_engine.runner.torch_program import torch_function
    from dice_engine.runner.torch_timing import torch_inputs

    for job in json.loads(Path(jobs_path).read_text()):
        program = parse_intent(job["intent"])
        bindings = intent_bindings(program)
        torch.backends.cuda.matmul.allow_tf32 = program.options.get("precision") == "tf32"
        inputs = torch_inputs(program, bindings, seed)
        fn = torch_function(program)
        out = torch.empty_like(fn(inputs))
        launcher = Launcher(job["library"], job["symbol"], job["roles"])
        args = gemm_parity.launch_args(job, inputs, out, bindings)
        launcher.fn(*args)
        fn(inputs)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        launcher.fn(*args)
        fn(inputs)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        print(json.dumps({"case": job["case"]}), flush=True)
        del inputs, out
        torch.cuda.empty_cache()
    return 0


def _duration_us(metrics: dict[str, float], unit_hint: str) -> float | None:
    value = metrics.get("Duration")
    if value is None:
        return None
    to_us = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3, "s": 1e6}
    return value * to_us.get(unit_hint, 1e-3)


def _duration_units(text: str) -> dict[str, str]:
    """{kernel: the unit ncu printed its Duration in}: it switches between ns, us and ms."""
    return {kernel: unit for kernel, name, unit, _ in metric_rows(text) if name == "Duration"}


def summarise(kernel: str, m: dict[str, float], unit: str) -> dict[str, Any]:
    stalls = sorted(
        (
            (k[len(STALL_PREFIX) : -len(STALL_SUFFIX)], v)
            for k, v in m.items()
            if k.startswith(STALL_PREFIX) and k.endswith(STALL_SUFFIX)
        ),
        key=lambda kv: -kv[1],
    )
    row: dict[str, Any] = {"kernel": kernel[:70], "µs": _duration_us(m, unit)}
    for label, name in COLUMNS.items():
        row[label] = m.get(name)
    row["fma pipe %"] = m.get("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active")
    wavefronts = m.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
    conflicts = m.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
    row["smem ld conflicts %"] = (
        100 * conflicts / wavefronts if wavefronts and conflicts is not None else None
    )
    row["top stalls"] = ", ".join(f"{k} {v:.1f}" for k, v in stalls[:3] if v > 0)
    return row


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return str(value).replace("|", "/")


def to_markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    labels = [
        "µs",
        "SM %",
        "DRAM %",
        "issue busy %",
        "fma pipe %",
        "regs",
        "occ. %",
        "IPC",
        "cyc/issue",
        "smem ld conflicts %",
        "top stalls",
    ]
    lines = [
        "# What limits the GEMMs (Nsight Compute)",
        "",
        f"- date: {meta['date']}; GPU: {meta['gpu']}; picks for {meta['arch']} (budget {meta['budget']}); "
        f"produced by `python benchmarks/{PROG}`",
        "- one launch of each kernel under `ncu --clock-control none` (replayed per section, so "
        "durations are single cold-ish runs, not the parity table's medians); stalls are cycles per "
        "issued instruction by reason.",
        "",
        "| case | kernel | " + " | ".join(labels) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in labels[:-1]) + " | --- |",
    ]
    for r in results:
        for k in r["kernels"]:
            lines.append(
                f"| {r['case']} | `{k['kernel']}` | " + " | ".join(_cell(k.get(x)) for x in labels) + " |"
            )
        if not r["kernels"]:
            lines.append(f"| {r['case']} | {r.get('detail', 'no kernel profiled')} |" + " |" * len(labels))
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", default="kb1_square,kb3_batched,kb17_A_Bt,kb8_irregular")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--budget", type=int, default=None)
    parser.add_argument("--out", default="benchmarks/GEMM_PROFILE.md")
    parser.add_argument("--timeout", type=float, default=400.0, help="seconds ncu may take in all")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child_main(args.child, args.seed)
    rows = [gemm_parity.generate(c, args.arch, args.budget) for c in gemm_parity.select_cases(args.cases)]
    import torch

    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "gpu": torch.cuda.get_device_name(0),
        "arch": args.arch,
        "budget": args.budget or "default",
    }
    results: list[dict[str, Any]] = [
        {
            "case": r.case,
            "sketch": r.sketch,
            "tokens": r.tokens,
            "kernels": [],
            "detail": r.detail or r.verdict,
        }
        for r in rows
    ]
    raw: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="gemm_profile_") as tmp:
        for row, result in zip(rows, results):
            if not row.library:
                continue
            jobs = Path(tmp) / f"{row.case}.json"
            jobs.write_text(json.dumps([gemm_parity.child_job(row)]))
            child = [
                sys.executable,
                str(Path(__file__).resolve()),
                "--child",
                str(jobs),
                "--seed",
                str(args.seed),
            ]
            extra = [
                "--profile-from-start",
                "off",
                *(a for s in SECTIONS for a in ("--section", s)),
                "--metrics",
                ",".join(EXTRA_METRICS),
            ]
            text = run_ncu(child, extra, timeout_s=args.timeout / max(1, len(rows)))
            metrics = parse_metrics(text)
            if not metrics:  # a metric this ncu does not know fails the whole run: sections only
                text = run_ncu(child, extra[:-2], timeout_s=args.timeout / max(1, len(rows)))
                metrics = parse_metrics(text)
            units = _duration_units(text)
            result["kernels"] = [summarise(k, m, units.get(k, "ns")) for k, m in metrics.items()]
            if not metrics:
                result["detail"] = "ncu gave no metrics: " + " ".join(text.split()[-40:])
            raw[row.case] = {"sketch": row.sketch, "tokens": row.tokens, "metrics": metrics,
                             "duration_units": units}
            if not metrics:   # what ncu said, to see why
                raw[row.case]["ncu_output"] = text[-20000:]
            print(row.case, json.dumps(result["kernels"], default=str)[:2000], flush=True)
    out = Path(args.out)
    out.write_text(to_markdown(results, meta))
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "cases": raw}, indent=1))
    print(to_markdown(results, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
