"""The engine's front door: an intent in, a verified (or model-ranked) kernel out.

    from dice_engine import CUDAGenerator
    result = CUDAGenerator(device="a100").generate("实现一个矩阵乘法内核，使用共享内存优化", precision="fp16")
    print(result.source, result.to_json())

`generate_file` serves every `// @dice:` intent of a CUDA file and returns the new text;
`verify_file` runs a file's generated regions as they stand on a GPU (verification, timing, and
on request compute-sanitizer and Nsight Compute findings).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Iterator

from .analysis.findings import TextEdit
from .arch import ArchSpec, resolve
from .intent import IntentError, default_kernel_name, find_intents, parse_intent, region_edit
from .intent.regions import apply_edit
from .ir.graph import Program
from .ir.patterns import classify
from .refine import Candidate, Evaluation, Runner, Search
from .runner.regions import RegionCheck as RegionCheck, verify_file as verify_file  # re-exported
from .sketches.registry import candidates, why_unsupported

DEFAULT_BUDGET = 24
# The size the Python API assumes for a words intent that names no size (the editor and the
# CLI never assume one: there such an intent is a diagnostic saying what is missing).
API_DEFAULT_SHAPE = (4096, 4096)


class GenerationError(Exception):
    """The intent was understood but no kernel could be produced; the message says why."""


@dataclass
class GenerationResult:
    source: str                      # the whole generated region body
    kernel: str                      # device code (the source without the launcher)
    launcher: str
    name: str
    arch: str
    gpu: str                         # whose throughput figures ranked the candidates
    sketch: str
    tokens: dict[str, Any]
    resources: dict[str, Any]        # registers, spill_bytes, smem_bytes, occupancy, limiter, threads, blocks
    verified: bool | None
    time_us: float | None            # measured (GPU), None without one
    reference_time_us: float | None  # PyTorch eager, timed beside it (GPU with torch), else None
    cost_us: float                   # the cost model's estimate
    round: int                       # the round that found this kernel
    rounds: int                      # rounds run so far
    history: list[Evaluation]
    summary: str                     # one line for the `// @dice-begin` marker
    intent: str = ""
    notes: list[str] = field(default_factory=list)   # assumptions and what held the kernel back
    # Measured with `time_us` (None without a GPU run); not part of to_json, whose keys design.md fixes.
    gbps: float | None = None                # fewest bytes the kernel must move / time
    tflops: float | None = None              # useful floating-point work / time (GEMM, conv)
    roofline_fraction: float | None = None   # the machine's measured ceilings' time floor / time

    def to_json(self) -> dict[str, Any]:
        """The `dice generate --format json` object (design.md §3)."""
        return {"source": self.source, "kernel": self.kernel, "launcher": self.launcher, "arch": self.arch,
                "sketch": self.sketch, "tokens": self.tokens,
                "resources": {k: self.resources.get(k) for k in ("registers", "spill_bytes", "smem_bytes",
                                                                  "occupancy")},
                "verified": self.verified, "time_us": self.time_us,
                "reference_time_us": self.reference_time_us, "rounds": self.rounds}

    def report(self) -> list[str]:
        """The short human report: sketch, tokens, ptxas figures, occupancy, timing, search."""
        res = self.resources
        occupancy = "unknown"
        if res.get("occupancy") is not None:
            occupancy = f"{res['occupancy']:.0%} (limited by {res['limiter']})"
        if self.verified:
            timing = f"verified on the GPU, {self.time_us:.1f} us measured (model: {self.cost_us:.1f} us)"
            rates = rate_parts(self.gbps, self.tflops, self.roofline_fraction, self.reference_time_us)
            timing += "".join(f", {part}" for part in rates)
        else:
            timing = f"not verified (no GPU); cost model estimate {self.cost_us:.1f} us on {self.gpu}"
        lines = [f"DICE report: `{self.name}` for {self.arch} ({self.gpu})",
                 f"  sketch     {self.sketch}",
                 f"  tokens     {', '.join(f'{k}={v}' for k, v in self.tokens.items())}",
                 f"  ptxas      {res.get('registers')} registers, {res.get('spill_bytes')} B spilled, "
                 f"{res.get('smem_bytes')} B shared memory; occupancy {occupancy}",
                 f"  launch     {res.get('blocks')} blocks x {res.get('threads')} threads",
                 f"  timing     {timing}",
                 f"  search     {len(self.history)} candidates in {self.rounds} rounds "
                 f"(best found in round {self.round})"]
        return lines + [f"  note       {n}" for n in self.notes]


def rate_parts(gbps: float | None, tflops: float | None, roofline_fraction: float | None,
               reference_time_us: float | None) -> list[str]:
    """The measured rates in words, those that exist ("1830 GB/s", "82% of roofline", ...)."""
    parts = []
    if gbps is not None:
        parts.append(f"{gbps:.0f} GB/s")
    if tflops is not None:
        parts.append(f"{tflops:.1f} TFLOP/s")
    if roofline_fraction is not None:
        parts.append(f"{roofline_fraction:.0%} of roofline")
    if reference_time_us is not None:
        parts.append(f"PyTorch reference {reference_time_us:.1f} us")
    return parts


def _device_code(source: str, launcher: str) -> str:
    at = source.rfind(launcher.strip()) if launcher.strip() else -1
    return source[:at].rstrip() + "\n" if at > 0 else source


def _result(candidate: Candidate, search: Search, program: Program, notes: list[str]) -> GenerationResult:
    ev, rendered, spec = candidate.evaluation, candidate.rendered, search.arch
    measured = f"; {ev.time_us:.1f} us on {spec.gpu_name}" if ev.time_us is not None else ""
    run = candidate.run if candidate.run is not None and candidate.run.verified else None
    return GenerationResult(
        source=rendered.source, kernel=_device_code(rendered.source, rendered.launcher),
        launcher=rendered.launcher, name=search.name, arch=spec.name, gpu=spec.gpu_name,
        sketch=rendered.sketch, tokens=dict(rendered.tokens), resources=dict(ev.resources),
        verified=ev.verified, time_us=ev.time_us,
        reference_time_us=run.reference_time_us if run else None, cost_us=ev.cost_us or 0.0, round=ev.round,
        rounds=search.rounds + 1, history=list(candidate.history), summary=rendered.summary + measured,
        intent=program.text, notes=notes + candidate.estimate.notes, gbps=run.gbps if run else None,
        tflops=run.tflops if run else None, roofline_fraction=run.roofline_fraction if run else None)


class CUDAGenerator:
    """Generates kernels for one target. `device`: a GPU name ("a100", "H100") or an arch
    ("sm_80"); an intent's own `arch=`/`gpu=` wins over it."""

    def __init__(self, device: str | None = None, *, arch: str | None = None, budget: int = DEFAULT_BUDGET,
                 runner: Runner | None = None, seed: int = 0,
                 default_shape: tuple[int, ...] | None = API_DEFAULT_SHAPE):
        self.target = resolve(device or arch)   # raises KeyError naming the supported targets
        self.budget, self.runner, self.seed = budget, runner, seed
        self.default_shape = default_shape

    def parse(self, intent: str, **overrides: Any) -> tuple[Program, list[str]]:
        """The program for `intent`, and a note when a size had to be assumed."""
        try:
            return parse_intent(intent, **overrides), []
        except IntentError as e:
            if self.default_shape is None or not e.message.startswith("no shape given"):
                raise
        program = parse_intent(intent, default_shape=self.default_shape, **overrides)
        size = "x".join(map(str, self.default_shape))
        return program, [f"no size given: assumed {size}"]

    def target_for(self, program: Program) -> ArchSpec:
        named = program.options.get("gpu") or program.options.get("arch")
        return resolve(named) if named else self.target

    def stream(self, intent: str, *, cancel: threading.Event | None = None,
               **overrides: Any) -> Iterator[GenerationResult]:
        """Each improvement as it is found (round by round). Raises IntentError when the intent
        cannot be understood, GenerationError when no kernel could be produced."""
        program, notes = self.parse(intent, **overrides)
        yield from self._results(self.search_for(program, cancel), program, notes)

    def generate(self, intent: str, **overrides: Any) -> GenerationResult:
        """The best kernel for `intent`. Overrides: precision=, arch=, name=, budget=, symbol values."""
        program, notes = self.parse(intent, **overrides)
        return self.generate_program(program, notes)

    def generate_program(self, program: Program, notes: list[str] | None = None, *,
                         cancel: threading.Event | None = None) -> GenerationResult:
        search = self.search_for(program, cancel)
        best = None
        for result in self._results(search, program, notes or []):
            best = result
        if best is None:
            raise GenerationError("cancelled before any kernel was found")
        best.rounds, best.history = search.rounds, list(search.history)
        return best

    def search_for(self, program: Program, cancel: threading.Event | None = None) -> Search:
        problem = classify(program)
        spec = self.target_for(program)
        sketches = candidates(problem, spec)
        if not sketches:
            raise GenerationError(why_unsupported(problem, spec))
        budget = int(program.options.get("budget", self.budget))
        return Search(problem, spec, sketches, default_kernel_name(program), budget=budget, seed=self.seed,
                      runner=self.runner, cancel=cancel, goal=program.options.get("goal", "throughput"))

    def _results(self, search: Search, program: Program, notes: list[str]) -> Iterator[GenerationResult]:
        found = False
        for candidate in search.run():
            found = True
            yield _result(candidate, search, program, notes)
        cancelled = search.cancel is not None and search.cancel.is_set()
        if not found and not cancelled:
            raise GenerationError(_why_nothing(search.history))


def _why_nothing(history: list[Evaluation]) -> str:
    if not history:
        return "no legal design point could be proposed"
    first = history[0]
    return f"no candidate worked ({len(history)} tried); first: {first.sketch} {first.status}: {first.detail}"


# -- whole files ---------------------------------------------------------------------------------

@dataclass
class FileReport:
    """What happened to one intent of a file."""
    line: int                        # 0-based line of the intent's first comment line
    intent: str
    status: str                      # "generated" | "up-to-date" | "edited" | "error"
    message: str = ""
    result: GenerationResult | None = None

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line + 1, "intent": self.intent, "status": self.status, "message": self.message,
                "name": self.result.name if self.result else None,
                "summary": self.result.summary if self.result else None,
                "result": self.result.to_json() if self.result else None}


FILE_ERRORS = (IntentError, GenerationError)


def generate_file(source: str, *, arch: str | None = None, budget: int = DEFAULT_BUDGET,
                  only_stale: bool = False, generator: CUDAGenerator | None = None,
                  cancel: threading.Event | None = None) -> tuple[str, list[FileReport]]:
    """Serve every `// @dice:` intent of a CUDA file; returns the new text and one report per
    intent. Only generated regions change. A region edited by hand since it was generated is
    left alone (status "edited"); with `only_stale`, regions whose intent is unchanged are too.
    Intents without a size are errors here, as in the editor: nothing is assumed."""
    generator = generator or CUDAGenerator(arch, budget=budget, default_shape=None)
    reports: list[FileReport] = []
    edits: list[TextEdit] = []
    names: set[str] = set()
    for site in find_intents(source):
        region = site.region
        if region is not None and region.edited:
            reports.append(FileReport(site.line, site.text, "edited",
                                      "the region was edited by hand since it was generated; left as is"))
            continue
        if only_stale and region is not None and not region.stale:
            reports.append(FileReport(site.line, site.text, "up-to-date"))
            continue
        try:
            program, notes = generator.parse(site.text)
            _give_unique_name(program, names)
            result = generator.generate_program(program, notes, cancel=cancel)
        except FILE_ERRORS as e:
            line = site.line
            if isinstance(e, IntentError):
                line = site.offset_to_position(e.start)[0]
            reports.append(FileReport(line, site.text, "error", one_line(e)))
            continue
        edits.append(region_edit(source, site, result.source, result.summary))
        reports.append(FileReport(site.line, site.text, "generated", result.summary, result))
    return apply_edits(source, edits), reports


def one_line(error: Exception) -> str:
    """An error's message on one line (IntentError keeps its text in `.message`)."""
    return " ".join(str(getattr(error, "message", None) or error).split())


def _give_unique_name(program: Program, taken: set[str]) -> None:
    """Kernel names must be unique per file: a repeated default name gets a numeric suffix; a
    repeated `name=` is the user's to fix."""
    name = default_kernel_name(program)
    if name in taken:
        if "name" in program.options:
            raise GenerationError(f"name={name} is already used by another intent in this file")
        name = next(f"{name}_{i}" for i in range(2, len(taken) + 3) if f"{name}_{i}" not in taken)
        program.options["name"] = name
    taken.add(name)


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    """Apply non-overlapping edits, last first, so that earlier positions stay valid."""
    for edit in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        text = apply_edit(text, edit)
    return text
