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
from typing import Any, Callable, Iterator

from .analysis.findings import TextEdit
from .arch import ArchSpec, resolve
from .intent import IntentError, default_kernel_name, find_intents, parse_intent, region_edit
from .intent.regions import apply_edit
from .ir.graph import Program
from .ir.patterns import classify
from .llm import (ConfigError, Judgement, LLMConfig, ModelBackend, ModelError, ModelGaveUp, best_kernel,
                  make_backend, model_rounds, split_launcher)
from .refine import Candidate, Evaluation, LearnedDenoiser, Runner, Search
from .refine.priors import DEFAULT_PRIOR, check_prior, make_denoiser
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
    prior: str = ""                  # the denoiser that proposed the design tokens ("heuristic", ...)
    # Measured with `time_us` (None without a GPU run); not part of to_json, whose keys design.md fixes.
    gbps: float | None = None                # fewest bytes the kernel must move / time
    tflops: float | None = None              # useful floating-point work / time (GEMM, conv)
    roofline_fraction: float | None = None   # the machine's measured ceilings' time floor / time
    model: str | None = None                 # the model that wrote the kernel (None: DICE's own sketches)

    def to_json(self) -> dict[str, Any]:
        """The `dice generate --format json` object (design.md §3, plus "prior": the denoiser's name)."""
        return {"source": self.source, "kernel": self.kernel, "launcher": self.launcher, "arch": self.arch,
                "sketch": self.sketch, "tokens": self.tokens,
                "resources": {k: self.resources.get(k) for k in ("registers", "spill_bytes", "smem_bytes",
                                                                  "occupancy")},
                "verified": self.verified, "time_us": self.time_us,
                "reference_time_us": self.reference_time_us, "rounds": self.rounds, "prior": self.prior}

    def report(self) -> list[str]:
        """The short human report: sketch, tokens, ptxas figures, occupancy, timing, search."""
        res = self.resources
        occupancy = "unknown"
        if res.get("occupancy") is not None:
            occupancy = f"{res['occupancy']:.0%} (limited by {res['limiter']})"
        if self.verified:
            estimate = f" (model: {self.cost_us:.1f} us)" if self.model is None else ""
            timing = f"verified on the GPU, {self.time_us:.1f} us measured{estimate}"
            rates = rate_parts(self.gbps, self.tflops, self.roofline_fraction, self.reference_time_us)
            timing += "".join(f", {part}" for part in rates)
        elif self.model is not None:
            timing = "NOT VERIFIED: no GPU checked this model-written kernel against the reference"
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
                 f"(best found in round {self.round}; prior {self.prior})"]
        if self.model is not None:
            when = "its first reply" if self.round == 0 else f"after {self.round} repair round(s)"
            lines[1:3] = [f"  model      written by {self.model}, {when}; compiled, passed the guards "
                          "and the static analyses"]
            lines = [line for line in lines if not line.startswith(("  search", "  launch"))]
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
    prior_note = search.denoiser.note() if isinstance(search.denoiser, LearnedDenoiser) else ""
    notes = notes + ([prior_note] if prior_note else [])
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
        tflops=run.tflops if run else None, roofline_fraction=run.roofline_fraction if run else None,
        prior=search.denoiser.name or type(search.denoiser).__name__)


class CUDAGenerator:
    """Generates kernels for one target. `device`: a GPU name ("a100", "H100") or an arch
    ("sm_80"); an intent's own `arch=`/`gpu=` wins over it."""

    def __init__(self, device: str | None = None, *, arch: str | None = None, budget: int = DEFAULT_BUDGET,
                 runner: Runner | None = None, seed: int = 0,
                 default_shape: tuple[int, ...] | None = API_DEFAULT_SHAPE,
                 llm: LLMConfig | None = None, model: ModelBackend | None = None,
                 on_progress: Callable[[str], None] | None = None, prior: str = DEFAULT_PRIOR):
        """`llm` configures a model backend (`model` passes one ready made); its `use` says
        when it is asked: off, fallback (only where no sketch serves) or compete. `on_progress`
        hears one line per model round (called on the generating thread). `prior` names the
        denoiser that fills design tokens: "heuristic" or "learned" (the shipped network, the
        heuristic where it has no weights or does not know a sketch); ValueError for others."""
        self.target = resolve(device or arch)   # UnknownTarget (a KeyError): one line naming the targets
        check_prior(prior)                      # an unknown prior fails here, not at the first search
        self.prior = prior
        self.budget, self.runner, self.seed = budget, runner, seed
        self.default_shape = default_shape
        self.llm = model.config if model is not None else llm
        self._model = model
        self.on_progress = on_progress

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
        yield from self._serve(program, notes, cancel)

    def generate(self, intent: str, **overrides: Any) -> GenerationResult:
        """The best kernel for `intent`. Overrides: precision=, arch=, name=, budget=, symbol values."""
        program, notes = self.parse(intent, **overrides)
        return self.generate_program(program, notes)

    def generate_program(self, program: Program, notes: list[str] | None = None, *,
                         cancel: threading.Event | None = None,
                         on_result: Callable[[GenerationResult], None] | None = None) -> GenerationResult:
        """The best kernel for `program`; `on_result` sees each improvement as it is found."""
        best = None
        for result in self._serve(program, notes or [], cancel):
            best = result
            if on_result is not None:
                on_result(result)
        if best is None:
            raise GenerationError("cancelled before any kernel was found")
        return best

    def _serve(self, program: Program, notes: list[str],
               cancel: threading.Event | None) -> Iterator[GenerationResult]:
        """DICE's search, the model's rounds, or both, as the `llm.use` setting says."""
        use = self.llm.use if self.llm is not None and self.llm.active else "off"
        try:
            search = self.search_for(program, cancel)
        except GenerationError as e:
            if use == "off":
                if any(n.op == "torch" for n in program.output.walk()):
                    raise GenerationError("only a model can write a kernel for this PyTorch expression: "
                                          "configure one (--llm URL --model NAME, or dice.llm.*)") from None
                raise
            yield from self._model_results(program, notes, cancel, why=str(e))
            return
        ours = None
        try:
            for ours in self._results(search, program, notes):
                yield ours
        except GenerationError as e:      # every candidate of DICE's own failed
            if use == "off":
                raise
            yield from self._model_results(program, notes, cancel, why=str(e))
            return
        if use == "compete" and not (cancel is not None and cancel.is_set()):
            yield from self._model_results(program, notes, cancel, incumbent=ours)

    def model_backend(self) -> ModelBackend:
        if self._model is None:
            if self.llm is None:
                raise GenerationError("no model is configured")
            try:
                self._model = make_backend(self.llm)
            except ConfigError as e:
                raise GenerationError(str(e)) from None
        return self._model

    def _model_results(self, program: Program, notes: list[str], cancel: threading.Event | None, *,
                       why: str = "",
                       incumbent: GenerationResult | None = None) -> Iterator[GenerationResult]:
        """The model's kernels that DICE accepts; with an incumbent, only those measured faster."""
        if incumbent is not None and self.runner is None:
            incumbent.notes.append("llm=compete: without a GPU the model's kernels cannot be compared, "
                                   "so the model was not asked")
            return
        problem = classify(program)
        spec = self.target_for(program)
        name = default_kernel_name(program)
        rounds = self._told(model_rounds(self.model_backend(), problem, spec, name, runner=self.runner,
                                         cancel=cancel))
        extra = notes + ([f"no DICE sketch serves this intent ({why})"] if why else [])
        try:
            for verdict in best_kernel(rounds):
                if incumbent is not None and not _beats(verdict, incumbent):
                    continue
                yield _model_result(verdict, spec, name, program, extra)
        except ModelError as e:
            if incumbent is None:
                raise GenerationError(one_line(e)) from None
            incumbent.notes.append(f"the model was not usable: {one_line(e)}")
        except ModelGaveUp as e:
            if cancel is not None and cancel.is_set():
                return
            if incumbent is None:
                raise GenerationError(str(e)) from None
            incumbent.notes.append(str(e))

    def search_for(self, program: Program, cancel: threading.Event | None = None) -> Search:
        problem = classify(program)
        spec = self.target_for(program)
        sketches = candidates(problem, spec)
        if not sketches:
            raise GenerationError(why_unsupported(problem, spec))
        budget = int(program.options.get("budget", self.budget))
        return Search(problem, spec, sketches, default_kernel_name(program), budget=budget, seed=self.seed,
                      runner=self.runner, cancel=cancel, goal=program.options.get("goal", "throughput"),
                      denoiser=make_denoiser(self.prior))

    def _told(self, judgements: Iterator[Judgement]) -> Iterator[Judgement]:
        """The model's rounds, each told to `on_progress` as it is judged."""
        for verdict in judgements:
            if self.on_progress is not None:
                self.on_progress(round_line(verdict, self.llm.label if self.llm else "model"))
            yield verdict

    def _results(self, search: Search, program: Program, notes: list[str]) -> Iterator[GenerationResult]:
        last = None
        for candidate in search.run():
            last = _result(candidate, search, program, notes)
            yield last
        cancelled = search.cancel is not None and search.cancel.is_set()
        if last is None and not cancelled:
            raise GenerationError(_why_nothing(search.history))
        if last is not None:     # the best so far, now with the whole search's figures
            last.rounds, last.history = search.rounds, list(search.history)


def round_line(verdict: Judgement, label: str) -> str:
    """One line on a judged model round, for progress reports."""
    head = f"model {label}, round {verdict.round}"
    if verdict.problems:
        return f"{head}: {verdict.problems[0][:120]}"
    if verdict.verified:
        return f"{head}: verified, {verdict.time_us:.1f} us" if verdict.time_us else f"{head}: verified"
    return f"{head}: compiled and passed the checks (not verified: no GPU)"


def _beats(verdict: Judgement, incumbent: GenerationResult) -> bool:
    return verdict.time_us is not None and (incumbent.time_us is None or verdict.time_us < incumbent.time_us)


def _model_result(verdict: Judgement, spec: ArchSpec, name: str, program: Program,
                  notes: list[str]) -> GenerationResult:
    """A model's accepted kernel as a result; unverified ones say so in their region header."""
    rendered, run = verdict.rendered, verdict.run
    assert rendered is not None
    kernel, launcher = split_launcher(verdict.code, name)
    label = str(rendered.tokens["model"])
    if verdict.verified:
        state = f"verified, {run.time_us:.1f} us on {spec.gpu_name}" if run and run.time_us else "verified"
    else:
        state = UNVERIFIED_MODEL_KERNEL
    measured = run if verdict.verified else None
    return GenerationResult(
        source=verdict.code, kernel=kernel, launcher=launcher, name=name, arch=spec.name, gpu=spec.gpu_name,
        sketch=rendered.sketch, tokens=dict(rendered.tokens), resources=verdict.resources(),
        verified=verdict.verified, time_us=verdict.time_us,
        reference_time_us=measured.reference_time_us if measured else None, cost_us=0.0,
        round=verdict.round, rounds=verdict.round + 1, history=[],
        summary=f"model {label}, round {verdict.round}; {state}", intent=program.text,
        notes=notes + verdict.advice, gbps=measured.gbps if measured else None,
        tflops=measured.tflops if measured else None,
        roofline_fraction=measured.roofline_fraction if measured else None, model=label)


# The region header of a kernel a model wrote that no GPU checked (the editor flags it, DICE-I005).
UNVERIFIED_MODEL_KERNEL = "UNVERIFIED: written by a model, not checked on a GPU"


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
                  cancel: threading.Event | None = None,
                  on_result: Callable[[GenerationResult], None] | None = None
                  ) -> tuple[str, list[FileReport]]:
    """Serve every `// @dice:` intent of a CUDA file; returns the new text and one report per
    intent. Only generated regions change. A region edited by hand since it was generated is
    left alone (status "edited"); with `only_stale`, regions whose intent is unchanged are too.
    Intents without a size are errors here, as in the editor: nothing is assumed. `on_result` sees
    each improvement of each intent's search as it is found."""
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
            result = generator.generate_program(program, notes, cancel=cancel, on_result=on_result)
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
