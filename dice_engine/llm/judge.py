"""A model's reply held to DICE's bar: code extracted, the cheating guards, nvcc, the static
analyses, then (with a GPU) verification against the reference and timing. Every problem found is
one line of feedback for the next round; a reply with none is a kernel DICE will show."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..analysis import check_source
from ..arch import ArchSpec
from ..compile import CompileResult, compile_cuda
from ..ir.patterns import Problem
from ..runner.guards import source_violations
from ..runner.report import RunReport
from ..sketches.base import RenderedKernel, launcher_params, launcher_signature
from .extract import NoCode, extract_code, launcher_pattern, missing_launcher

MAX_COMPILER_LINES = 8
MAX_FINDINGS = 8


@dataclass
class Judgement:
    round: int
    code: str = ""
    problems: list[str] = field(default_factory=list)   # why it cannot be shown (feedback)
    advice: list[str] = field(default_factory=list)     # warnings and timing: worth a better round
    rendered: RenderedKernel | None = None
    compiled: CompileResult | None = None
    run: RunReport | None = None

    @property
    def accepted(self) -> bool:
        return not self.problems and self.rendered is not None

    @property
    def verified(self) -> bool | None:
        return self.run.verified if self.run is not None and self.run.verdict != "no-gpu" else None

    @property
    def time_us(self) -> float | None:
        return self.run.time_us if self.verified else None

    def resources(self) -> dict[str, Any]:
        """ptxas figures of the heaviest kernel (most registers)."""
        kernels = list(self.compiled.resources.values()) if self.compiled else []
        if not kernels:
            return {"registers": None, "spill_bytes": None, "smem_bytes": None, "occupancy": None}
        worst = max(kernels, key=lambda k: k.registers)
        return {"registers": worst.registers, "spill_bytes": max(k.spill_bytes for k in kernels),
                "smem_bytes": max(k.smem_bytes for k in kernels), "occupancy": None}


def split_launcher(code: str, name: str) -> tuple[str, str]:
    """(device code, launcher code) of a model's translation unit."""
    match = launcher_pattern(name).search(code)
    if match is None:
        return code, ""
    return code[:match.start()].rstrip() + "\n", code[match.start():]


def judge(reply: str, round_no: int, problem: Problem, spec: ArchSpec, name: str, label: str,
          runner: Any = None) -> Judgement:
    """Everything DICE checks about `reply`, cheapest first; stops at the first stage that fails."""
    verdict = Judgement(round_no)
    params = launcher_params(problem)
    try:
        verdict.code = extract_code(reply, name)
    except NoCode as e:
        verdict.problems.append(str(e))
        return verdict
    code = verdict.code
    if why := missing_launcher(code, name, launcher_signature(name, params)):
        verdict.problems.append(why)
        return verdict
    verdict.problems += [f"refused: the code {why}" for why in source_violations(code, problem.program)]
    if verdict.problems:
        return verdict
    verdict.compiled = compiled = compile_cuda(code, spec.name, output="cubin", filename="model_kernel.cu")
    if not compiled.ok:
        errors = [m for m in compiled.messages if m.severity == "error"][:MAX_COMPILER_LINES]
        verdict.problems += [f"nvcc: line {m.line}: {m.message.splitlines()[0]}" for m in errors] \
            or [f"nvcc: {compiled.first_error() or 'failed'}"]
        return verdict
    findings = check_source(code, "model_kernel.cu", spec.name)
    for f in findings[:MAX_FINDINGS]:
        line = f"{f.code} ({f.category}) line {f.line}: {f.message}"
        (verdict.problems if f.severity == "error" else verdict.advice).append(line)
    if verdict.problems:
        return verdict
    verdict.rendered = RenderedKernel(
        sketch=f"model:{label}", tokens={"model": label, "round": round_no}, source=code,
        kernel_names=[], launcher=f"{name}_launch", params=params, launches=[],
        summary=f"written by model {label} (round {round_no})")
    if runner is not None:
        verdict.run = run = runner.evaluate(verdict.rendered, problem, spec)
        if run.verdict not in ("ok", "no-gpu"):
            verdict.problems.append(f"on the GPU: {run.verdict}: {run.detail}")
        elif run.time_us is not None and run.reference_time_us is not None \
                and run.time_us > run.reference_time_us:
            verdict.advice.append(f"verified, but {run.time_us:.1f} us is slower than PyTorch's "
                                  f"{run.reference_time_us:.1f} us")
    return verdict
