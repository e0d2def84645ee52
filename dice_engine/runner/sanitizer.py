"""compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on a candidate or any command,
its text report turned into findings at source lines (needs -lineinfo)."""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ..analysis.codes import CODES
from ..analysis.findings import Finding
from ..ir.patterns import Problem
from ..sketches.base import RenderedKernel
from .env import child_environment
from .target import BuildFailed, prepare, reduced_shapes

TOOLS = ("memcheck", "synccheck", "initcheck", "racecheck")
RACECHECK_MAX_BLOCKS = 64          # racecheck is ~10^5× slower: a block or two, not a full grid
_PREFIX = "========= "
_LOCATION = re.compile(r"at (?P<func>.+?)\+0x[0-9a-fA-F]+ in (?P<file>[^\s:]+):(?P<line>\d+)")
_NOT_FINDINGS = ("COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY",
                 "Program hit ", "Error: process didn't terminate", "Target application returned")


@dataclass
class Record:
    """One report of the sanitizer: its first line and the indented lines under it."""
    tool: str
    message: str
    details: list[str] = field(default_factory=list)

    def locations(self) -> list[tuple[str, int, str]]:
        return [(m["file"], int(m["line"]), m["func"])
                for text in [self.message, *self.details] for m in _LOCATION.finditer(text)]


def parse_records(text: str, tool: str) -> list[Record]:
    records: list[Record] = []
    for raw in text.splitlines():
        if not raw.startswith(_PREFIX.rstrip()):
            continue
        body = raw[len(_PREFIX):] if raw.startswith(_PREFIX) else ""
        if not body.strip():
            continue
        if body[0].isspace():
            if records:
                records[-1].details.append(body.strip())
            continue
        records.append(Record(tool, body.strip()))
    return [r for r in records if not r.message.startswith(_NOT_FINDINGS)]


def _code(record: Record) -> str:
    return {"memcheck": "DICE-D001", "racecheck": "DICE-D002", "synccheck": "DICE-D003",
            "initcheck": "DICE-D004"}[record.tool]


_BOILERPLATE = ("at ", "Saved host backtrace", "Host Frame", "Address 0x")


def _without_locations(text: str) -> str:
    return re.sub(r"\s+", " ", _LOCATION.sub(lambda m: f"at line {m['line']}", text)).strip()


def _message(record: Record, count: int) -> str:
    """The report's first line and its telling details (thread, bounds, the other access)."""
    message = _without_locations(record.message.removeprefix("Error: ").removeprefix("Warning: "))
    useful = [_without_locations(d) for d in record.details if not d.startswith(_BOILERPLATE)]
    extra = "; ".join(useful[:3])
    times = f" ({count} reports)" if count > 1 else ""
    return f"{record.tool}: {message}{': ' + extra if extra else ''}{times}"


LocationMap = Callable[[str, int], "tuple[str, int] | None"]


def to_findings(records: Iterable[Record], where: LocationMap) -> list[Finding]:
    """One finding per (code, line), counting repeats; `where` maps (file, 1-based line) to
    (path, 0-based line) or None for locations outside the code under test."""
    grouped: dict[tuple[str, str, int], tuple[Record, int]] = {}
    for record in records:
        mapped = next((m for f, ln, _ in record.locations() if (m := where(f, ln)) is not None), None)
        if mapped is None:
            continue
        key = (_code(record), *mapped)
        first, count = grouped.get(key, (record, 0))
        grouped[key] = (first, count + 1)
    findings = []
    for (code, path, line), (record, count) in grouped.items():
        info = CODES[code]
        data = {"tool": record.tool, "count": count, "report": [record.message, *record.details]}
        findings.append(Finding(path, line, 0, line, 0, info.category, code, info.severity,
                                _message(record, count), source="sanitizer", data=data))
    return sorted(findings, key=lambda f: (f.line, f.code))


def run_tool(tool: str, argv: Sequence[str], *, timeout_s: float, cwd: str | None = None) -> str:
    """compute-sanitizer's report for `argv` under `tool` (text; a timeout is said in it)."""
    sanitizer = shutil.which("compute-sanitizer")
    if sanitizer is None:
        raise FileNotFoundError("compute-sanitizer is not on PATH (it ships with the CUDA toolkit)")
    cmd = [sanitizer, "--tool", tool, "--print-limit", "200", *argv]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout_s,
                              cwd=cwd, env=child_environment())
    except subprocess.TimeoutExpired as exc:
        partial = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return partial
    return done.stdout + done.stderr


def sanitize_command(argv: Sequence[str], *, tools: Sequence[str] = TOOLS, cwd: str | None = None,
                     where: LocationMap | None = None, timeout_s: float = 600.0) -> list[Finding]:
    """Run any program (a user's test binary, a harness) under each tool. Without `where`,
    locations keep the file names the sanitizer prints."""
    mapping = where or (lambda f, ln: (f, ln - 1))
    records = [record for tool in tools
               for record in parse_records(run_tool(tool, argv, timeout_s=timeout_s, cwd=cwd), tool)]
    return to_findings(records, mapping)


def sanitize(rendered: RenderedKernel, problem: Problem, *, arch: str = "sm_90",
             tools: Sequence[str] = TOOLS, path: str = "<generated>", first_line: int = 0,
             small: tuple[RenderedKernel, Problem] | None = None, device: int = 0,
             timeout_s: float = 600.0) -> list[Finding]:
    """compute-sanitizer on one verification run of a generated kernel. Findings point into the
    region: `path`, with `first_line` the 0-based file line of the region's first line.

    racecheck runs on a reduced grid: `small` (the same design rendered for a small problem)
    when given, else the problem's symbols cut down; a fixed-shape grid larger than
    RACECHECK_MAX_BLOCKS blocks is skipped, and a finding says so."""
    findings: list[Finding] = []
    with tempfile.TemporaryDirectory(prefix="dice-sanitize-") as tmp:
        for tool in tools:
            target, shapes = rendered, None
            if tool == "racecheck":
                target, prob = small or (rendered, problem)
                shapes = None if small else reduced_shapes(problem)
                blocks = sum(launch.blocks for launch in target.launches)
                if small is None and shapes is None and blocks > RACECHECK_MAX_BLOCKS:
                    findings.append(_racecheck_skipped(path, first_line, blocks))
                    continue
            else:
                prob = problem
            workdir = Path(tmp) / tool
            workdir.mkdir()
            try:
                shot = prepare(target, prob, arch, workdir, shapes=shapes, device=device)
            except BuildFailed as exc:
                raise ValueError(f"the kernel does not compile: {exc}") from exc
            where = region_locations(shot.source_path, path, first_line)

            report = run_tool(tool, shot.argv, timeout_s=timeout_s)
            findings += to_findings(parse_records(report, tool), where)
    return findings


def region_locations(source_path: Path, path: str, first_line: int) -> LocationMap:
    """Locations in the compiled region file → the caller's file and line; others → None."""
    def where(file: str, line: int) -> tuple[str, int] | None:
        same = file == str(source_path) or Path(file).name == source_path.name
        return (path, first_line + line - 1) if same else None
    return where


def _racecheck_skipped(path: str, line: int, blocks: int) -> Finding:
    info = CODES["DICE-D005"]
    return Finding(path, line, 0, line, 0, info.category, "DICE-D005", info.severity,
                   f"racecheck skipped: the grid has {blocks} blocks (more than {RACECHECK_MAX_BLOCKS}); "
                   "give a symbolic size or a reduced problem to check races", source="sanitizer")
