"""A file's generated regions checked on the GPU as they stand: each region's own text (the
kernel and its `extern "C"` launcher, possibly edited by hand) is compiled, verified against the
reference of its intent's Program and timed through a GpuRunner; on request compute-sanitizer
and Nsight Compute run it too, their findings on the file's lines. Nothing is re-rendered."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..analysis.findings import Finding
from ..intent import IntentError, IntentSite, find_intents, parse_intent
from ..intent.regions import split_lines
from ..ir.patterns import Problem, classify
from ..sketches.base import RenderedKernel, launcher_params
from .profiler import profile
from .report import RunReport
from .sanitizer import sanitize

CHECKS = ("sanitize", "profile")
# racecheck is left out: it needs a reduced grid, which only re-rendering the design could give.
REGION_SANITIZER_TOOLS = ("memcheck", "synccheck", "initcheck")
_LAUNCHER = re.compile(r'extern\s+"C"\s+void\s+(\w+_launch)\s*\(([^)]*)\)')
# Instructions that exist only on the arch-specific target (sm_90a), as RenderedKernel.arch_suffix says.
_ARCH_SPECIFIC = re.compile(r"\b(wgmma|setmaxnreg)\b")


@dataclass
class RegionCheck:
    """What running one region's code found. status: "verified", "failed" (the run or a check
    could not pass) or "skipped" (nothing ran: stale region, unparseable intent, no launcher)."""
    line: int                        # 0-based line of the intent
    intent_hash: str
    status: str
    message: str = ""
    gpu: str = ""
    run: RunReport | None = None
    findings: list[Finding] = field(default_factory=list)   # source "sanitizer" / "profiler"
    notes: list[str] = field(default_factory=list)          # checks that could not run, and why

    def figures(self) -> dict[str, Any]:
        """The measured figures (hover): verdict, time, rates, reference time."""
        run = self.run
        return {"gpu": self.gpu, "status": self.status, "message": self.message,
                "verified": run.verified if run else None, "verdict": run.verdict if run else None,
                "time_us": run.time_us if run else None, "gbps": run.gbps if run else None,
                "tflops": run.tflops if run else None,
                "roofline_fraction": run.roofline_fraction if run else None,
                "reference_time_us": run.reference_time_us if run else None}


def region_kernel(site: IntentSite, lines: Sequence[str], problem: Problem) -> RenderedKernel | str:
    """The region of `site` as a RenderedKernel (its text, the launcher ABI the intent implies),
    or why it cannot be run: a launcher whose parameters do not match would read garbage."""
    region = site.region
    assert region is not None
    body = "\n".join(lines[region.begin_line + 1:region.end_line]) + "\n"
    launcher = _LAUNCHER.search(body)
    if launcher is None:
        return 'the region has no extern "C" void <name>_launch(...) launcher'
    params = launcher_params(problem)
    declared = [p for p in launcher.group(2).split(",") if p.strip()]
    if len(declared) != len(params) + 1:
        return (f"the launcher `{launcher.group(1)}` takes {len(declared)} parameters; the intent needs "
                f"{len(params) + 1} (inputs, output, symbols, stream)")
    sketch = region.summary.split()[0] if region.summary.split() else "region"
    return RenderedKernel(sketch=sketch, tokens={}, source=body, kernel_names=[], launcher=launcher.group(1),
                          params=params, launches=[], summary=region.summary,
                          arch_suffix="a" if _ARCH_SPECIFIC.search(body) else "")


def _problem(site: IntentSite) -> Problem | str:
    try:
        return classify(parse_intent(site.text))
    except IntentError as exc:
        return exc.message


def verify_file(source: str, path: str = "<buffer>", arch: str = "sm_90", runner: Any = None, *,
                checks: Sequence[str] = (), timeout_s: float = 120.0) -> list[RegionCheck]:
    """Check every generated region of `source` whose intent parses and is not stale: verify and
    time it through `runner` (a GpuRunner); `checks` adds "sanitize" (memcheck, synccheck,
    initcheck) and/or "profile" (Nsight Compute), each tool run limited to `timeout_s`.
    Findings point at `path`'s lines. Without a runner, or when it has no GPU: [] (nothing runs)."""
    unknown = set(checks) - set(CHECKS)
    if unknown:
        raise ValueError(f"unknown checks {sorted(unknown)}; known: {', '.join(CHECKS)}")
    if runner is None or not runner.available():
        return []
    lines = split_lines(source)[0]
    target = runner.gpu.get("arch") or arch
    out = []
    for site in find_intents(source):
        if site.region is not None:
            out.append(_check_region(site, lines, path, target, runner, checks, timeout_s))
    return out


def _check_region(site: IntentSite, lines: Sequence[str], path: str, arch: str, runner: Any,
                  checks: Sequence[str], timeout_s: float) -> RegionCheck:
    check = RegionCheck(site.line, site.hash, "skipped", gpu=runner.gpu.get("gpu", ""))
    region = site.region
    assert region is not None
    if region.stale:
        check.message = "the region was generated for a different intent; regenerate it first"
        return check
    problem = _problem(site)
    if isinstance(problem, str):
        check.message = f"the intent cannot be served: {problem}"
        return check
    kernel = region_kernel(site, lines, problem)
    if isinstance(kernel, str):
        check.message = kernel
        return check
    check.run = runner.evaluate(kernel, problem, arch)
    check.status = "verified" if check.run.verified else "failed"
    check.message = f"{check.run.verdict}: {check.run.detail}"
    if not check.run.verified:
        return check          # the tools would only repeat a compile error or a crash
    first_line = region.begin_line + 1
    for name in checks:
        try:
            if name == "sanitize":
                check.findings += sanitize(kernel, problem, arch=arch, tools=REGION_SANITIZER_TOOLS,
                                           path=path, first_line=first_line, device=runner.device,
                                           timeout_s=timeout_s)
            else:
                check.findings += profile(kernel, problem, arch=arch, path=path, first_line=first_line,
                                          device=runner.device, timeout_s=timeout_s)
        except (FileNotFoundError, ValueError) as exc:   # tool not installed; the region does not build
            check.notes.append(f"{name}: {exc}")
    return check
