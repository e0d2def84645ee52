"""Nsight Compute on a candidate or any command: per-kernel metrics (sectors per request, bank
conflicts, achieved occupancy, DRAM throughput) and the per-source-line page (sectors moved
against the ideal, shared-memory conflicts), as findings at source lines (needs -lineinfo).
Clocks are never locked (--clock-control none)."""
from __future__ import annotations

import csv
import io
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from ..analysis.codes import CODES
from ..analysis.findings import Finding
from ..ir.patterns import Problem
from ..sketches.base import RenderedKernel
from .env import child_environment
from .sanitizer import LocationMap, region_locations
from .target import BuildFailed, prepare

EXCESS_FACTOR = 2.0        # a line moving at least twice the ideal sectors is uncoalesced
MIN_LINE_SHARE = 0.01      # ignore lines with under 1% of the kernel's global sectors
CONFLICT_SHARE = 0.1       # bank conflicts on over 10% of shared wavefronts are worth a finding


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def csv_rows(text: str, first_cell: str) -> list[list[str]]:
    """The CSV part of ncu's output: from the first row starting with `first_cell`."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith(f'"{first_cell}"')), None)
    return [] if start is None else list(csv.reader(io.StringIO("\n".join(lines[start:]))))


_METRIC_COLUMNS = ("Kernel Name", "Metric Name", "Metric Unit", "Metric Value")


def metric_rows(text: str) -> Iterator[tuple[str, str, str, str]]:
    """(kernel name, metric name, unit, value text) per metric row of ncu's CSV table."""
    rows = csv_rows(text, "ID")
    if not rows:
        return
    header = rows[0]
    col = {name: i for i, name in enumerate(header)}
    if not set(_METRIC_COLUMNS) <= col.keys():
        return
    # rows may carry fewer trailing cells than the header (rule columns); anything else is the
    # profiled program's own output mixed into ncu's
    needed = max(col[c] for c in _METRIC_COLUMNS) + 1
    for row in rows[1:]:
        if needed <= len(row) <= len(header) and row[0].isdigit():
            kernel, name, unit, value = (row[col[c]] for c in _METRIC_COLUMNS)
            yield kernel, name, unit, value


def parse_metrics(text: str) -> dict[str, dict[str, float]]:
    """{kernel name (as ncu prints it, with the launch index when repeated): {metric: value}}."""
    kernels: dict[str, dict[str, float]] = {}
    for kernel, name, _, value_text in metric_rows(text):
        value = _number(value_text)
        if value is not None:
            kernels.setdefault(kernel, {})[name] = value
    return kernels


@dataclass
class SourceLine:
    file: str
    function: str
    line: int
    columns: dict[str, float] = field(default_factory=dict)


def parse_source_page(text: str) -> list[SourceLine]:
    """The CUDA-line rows of `--page source --print-source cuda,sass --csv` (SASS rows skipped)."""
    lines: list[SourceLine] = []
    file = function = ""
    header: list[str] = []
    for row in csv_rows(text, "File Path"):
        if not row:
            continue
        if row[0] == "File Path":
            file = row[1] if len(row) > 1 else ""
        elif row[0] == "Function Name":
            function = row[1] if len(row) > 1 else ""
        elif row[0] == "Line No":
            header = row
        elif header and row[0].isdigit() and len(row) == len(header):
            values = {name: v for name, cell in zip(header, row) if (v := _number(cell)) is not None}
            lines.append(SourceLine(file, function, int(row[0]), values))
    return lines


def _finding(code: str, where: tuple[str, int], message: str, data: dict) -> Finding:
    info = CODES[code]
    path, line = where
    return Finding(path, line, 0, line, 0, info.category, code, info.severity, message,
                   source="profiler", data=data)


def base_name(kernel: str) -> str:
    """`ns::kernel(const float *, ...)` → `kernel`: the metrics table and the source page spell
    kernel names differently (with or without namespace and parameters)."""
    return kernel.split("(")[0].split("::")[-1].strip()


def to_findings(metrics: dict[str, dict[str, float]], lines: list[SourceLine],
                where: LocationMap) -> list[Finding]:
    findings: list[Finding] = []
    first_line: dict[str, tuple[str, int]] = {}
    for sl in lines:
        name = base_name(sl.function)
        if name not in first_line or sl.line < first_line[name][1]:
            first_line[name] = (sl.file, sl.line)
    kernel_sectors: dict[str, float] = {}
    for sl in lines:
        kernel_sectors[sl.function] = kernel_sectors.get(sl.function, 0.0) + sl.columns.get(
            "L2 Theoretical Sectors Global", 0.0)
    conflicted_kernels = set()
    for sl in lines:
        mapped = where(sl.file, sl.line)
        if mapped is None:
            continue
        sectors = sl.columns.get("L2 Theoretical Sectors Global", 0.0)
        ideal = sl.columns.get("L2 Theoretical Sectors Global Ideal", 0.0)
        share = sectors / kernel_sectors[sl.function] if kernel_sectors[sl.function] else 0.0
        if ideal > 0 and sectors >= EXCESS_FACTOR * ideal and share >= MIN_LINE_SHARE:
            message = (f"measured: global accesses on this line move {sectors / ideal:.1f}× the sectors "
                       f"a coalesced pattern needs ({sectors:,.0f} vs {ideal:,.0f})")
            data = {"sectors": sectors, "ideal_sectors": ideal, "kernel": sl.function}
            findings.append(_finding("DICE-D010", mapped, message, data))
        ways = sl.columns.get("L1 Conflicts Shared N-Way", 0.0)
        if ways > 1.5:
            conflicted_kernels.add(base_name(sl.function))
            findings.append(_finding("DICE-D011", mapped,
                                     f"measured: shared-memory accesses on this line are {ways:.0f}-way "
                                     "bank-conflicted", {"ways": ways, "kernel": sl.function}))
    for kernel, m in metrics.items():
        located = first_line.get(base_name(kernel))
        mapped = where(*located) if located else None
        if mapped is None:
            continue
        findings += _kernel_findings(kernel, m, mapped, base_name(kernel) in conflicted_kernels)
    return sorted(findings, key=lambda f: (f.line, f.code))


_LD, _ST = "l1tex__t_{}_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_{}_pipe_lsu_mem_global_op_st.sum"
_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{}.sum"
_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{}.sum"
_OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
_DRAM = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
_DURATION = "gpu__time_duration.sum"


def _per_request(m: dict[str, float], pattern: str) -> float | None:
    requests = m.get(pattern.format("requests"))
    return m.get(pattern.format("sectors"), 0.0) / requests if requests else None


def _kernel_findings(kernel: str, m: dict[str, float], at: tuple[str, int],
                     line_conflicts: bool) -> list[Finding]:
    """The kernel's summary, and a kernel-level bank-conflict finding when no line carries one."""
    ld, st = _per_request(m, _LD), _per_request(m, _ST)
    conflicts = m.get(_CONFLICTS.format("ld"), 0.0) + m.get(_CONFLICTS.format("st"), 0.0)
    wavefronts = m.get(_WAVEFRONTS.format("ld"), 0.0) + m.get(_WAVEFRONTS.format("st"), 0.0)
    parts = []
    if _DURATION in m:
        parts.append(f"{m[_DURATION] / 1e3:.1f} µs")
    if _DRAM in m:
        parts.append(f"DRAM throughput {m[_DRAM]:.1f}% of peak")
    if _OCCUPANCY in m:
        parts.append(f"achieved occupancy {m[_OCCUPANCY]:.1f}%")
    if ld is not None:
        parts.append(f"global loads {ld:.1f} sectors/request")
    if st is not None:
        parts.append(f"stores {st:.1f} sectors/request")
    if wavefronts:
        parts.append(f"shared bank conflicts {conflicts:,.0f} of {wavefronts:,.0f} wavefronts")
    data = {"kernel": kernel, **m}
    name = base_name(kernel)
    out = [_finding("DICE-D012", at, f"measured `{name}`: " + "; ".join(parts), data)]
    if wavefronts and conflicts / wavefronts > CONFLICT_SHARE and not line_conflicts:
        message = (f"measured: {conflicts / wavefronts:.0%} of `{name}`'s shared-memory wavefronts are "
                   "extra passes caused by bank conflicts")
        out.append(_finding("DICE-D011", at, message, data))
    return out


def run_ncu(argv: Sequence[str], extra: Sequence[str], *, timeout_s: float) -> str:
    ncu = shutil.which("ncu")
    if ncu is None:
        raise FileNotFoundError("ncu (Nsight Compute) is not on PATH")
    cmd = [ncu, "--clock-control", "none", "--target-processes", "all", "--csv", *extra, *argv]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout_s,
                              env=child_environment())
    except subprocess.TimeoutExpired as exc:
        return exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
    return done.stdout + done.stderr


METRICS = (*(p.format(k) for p in (_LD, _ST) for k in ("sectors", "requests")),
           *(p.format(op) for p in (_CONFLICTS, _WAVEFRONTS) for op in ("ld", "st")),
           _OCCUPANCY, _DRAM, _DURATION)


def profile_command(argv: Sequence[str], *, where: LocationMap | None = None, timeout_s: float = 600.0,
                    source_folders: Sequence[str] = ()) -> list[Finding]:
    """Profile every kernel `argv` launches. Without `where`, findings keep ncu's file paths."""
    mapping = where or (lambda f, ln: (f, ln - 1))
    metrics = parse_metrics(run_ncu(argv, ["--metrics", ",".join(METRICS)], timeout_s=timeout_s))
    folders = [arg for folder in source_folders for arg in ("--source-folders", folder)]
    page = run_ncu(argv, ["--section", "SourceCounters", "--import-source", "yes", "--page", "source",
                          "--print-source", "cuda,sass", *folders], timeout_s=timeout_s)
    return to_findings(metrics, parse_source_page(page), mapping)


def profile(rendered: RenderedKernel, problem: Problem, *, arch: str = "sm_90", path: str = "<generated>",
            first_line: int = 0, device: int = 0, timeout_s: float = 600.0) -> list[Finding]:
    """Nsight Compute on one run of a generated kernel; findings point into the region (`path`,
    `first_line` = the 0-based file line of the region's first line)."""
    with tempfile.TemporaryDirectory(prefix="dice-profile-") as tmp:
        try:
            shot = prepare(rendered, problem, arch, Path(tmp), device=device)
        except BuildFailed as exc:
            raise ValueError(f"the kernel does not compile: {exc}") from exc
        where = region_locations(shot.source_path, path, first_line)
        return profile_command(shot.argv, where=where, timeout_s=timeout_s,
                               source_folders=[str(shot.source_path.parent)])
