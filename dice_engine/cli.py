"""`dice`: generate kernels from intents, check CUDA files, report the toolchain.

Exit codes: 0 success, 1 an intent cannot be served or a check found errors (one line says
why, never a traceback), 2 usage errors.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable, Sequence

from .api import CUDAGenerator, FileReport, GenerationError, GenerationResult, generate_file, one_line
from .arch import DEFAULT_ARCH, UnknownTarget, resolve, supported_targets
from .analysis import Finding
from .compile import NvccNotFound, compile_cuda
from .compile.nvcc import TEMP_SOURCE
from .bench import command as bench_command
from .intent import IntentError
from .kernelbench import command as kernelbench_command
from .llm import BACKENDS, USES, ConfigError, LLMConfig, from_environment
from .refine.priors import DEFAULT_PRIOR, PRIORS

CUDA_SUFFIXES = (".cu", ".cuh")
USER_ERRORS = (IntentError, GenerationError, NvccNotFound, UnknownTarget)
TARGETS_HELP = supported_targets()


class UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dice", description="DICE: a CUDA kernel copilot")
    sub = parser.add_subparsers(dest="command", required=True)

    gen = sub.add_parser("generate", help="a kernel for an intent, or for every intent in a .cu file")
    gen.add_argument("target", help='an intent ("y = softmax(x, dim=1); x: f32[4096, 1024]") or FILE.cu')
    gen.add_argument("--arch", help=f"the target when the intent names none: {TARGETS_HELP}; "
                                    f"default {DEFAULT_ARCH}")
    gen.add_argument("--out", help="write the kernel (or the filled file) here instead of stdout")
    gen.add_argument("--budget", type=int, help="candidate evaluations per intent (default 24)")
    gen.add_argument("--format", choices=("text", "json"), default="text")
    gen.add_argument("--write", action="store_true", help="FILE.cu: rewrite its regions in place")
    gen.add_argument("--seed", type=int, default=0, help="seed of the search (same seed, same result)")
    gen.add_argument("--prior", choices=PRIORS, default=DEFAULT_PRIOR,
                     help="the denoiser that fills design tokens: the hand-written heuristic, or the "
                          "learned network (the heuristic where it has no weights or knows no sketch)")
    gen.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="print each improvement of the search to stderr while it runs "
                          "(default: when stderr is a terminal)")
    model = gen.add_argument_group("model backend (for what DICE's sketches cannot serve; see the README)")
    model.add_argument("--llm", metavar="BASE_URL",
                       help="an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 "
                            "(env DICE_LLM_BASE_URL)")
    model.add_argument("--model", help="the model's name at that endpoint (env DICE_LLM_MODEL)")
    model.add_argument("--llm-backend", choices=BACKENDS, default="openai")
    model.add_argument("--llm-model-path", metavar="DIR", help="transformers: a local model directory")
    model.add_argument("--llm-use", choices=USES, default="fallback",
                       help="off, fallback (only where no sketch serves; default) or compete")
    model.add_argument("--llm-rounds", type=int, default=3, help="repair rounds after the first reply")
    model.add_argument("--llm-timeout", type=float, default=120.0, help="seconds per model request")
    model.add_argument("--llm-max-tokens", type=int, default=4096, help="most tokens per reply")
    model.add_argument("--llm-temperature", type=float, default=0.2)
    model.add_argument("--trust-remote-code", action="store_true",
                       help="transformers: run the Python code that ships with the model directory")
    model.add_argument("--diffusion-steps", type=int, default=256,
                       help="transformers, diffusion language models: denoising steps")
    model.add_argument("--block-length", type=int, default=32,
                       help="transformers, block-diffusion models: tokens per block")

    check = sub.add_parser(
        "check", help="diagnostics for CUDA files",
        description="Static diagnostics (races, barriers, coalescing, bank conflicts, precision, overflow) "
                    "and nvcc/ptxas findings (errors, spills, occupancy) for CUDA files. Exit 1 when an "
                    "error is found.")
    check.add_argument("files", nargs="+", metavar="FILE",
                       help="CUDA source files (.cu, .cuh); #include \"...\" is resolved from each "
                            "file's folder")
    check.add_argument("--arch", default=DEFAULT_ARCH,
                       help=f"the target nvcc builds for and occupancy is judged on: {TARGETS_HELP}; "
                            f"default {DEFAULT_ARCH}")
    check.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    check.add_argument("--gpu", action="store_true",
                       help="also run the file's program (its main()) under compute-sanitizer on this GPU")

    doctor = sub.add_parser("doctor", help="which tools DICE found (nvcc, GPU, pycuda, ncu, sanitizer)")
    doctor.add_argument("--format", choices=("text", "json"), default="text")

    bench = sub.add_parser("bench", help="the benchmark suite against PyTorch on this GPU (RESULTS.md)")
    bench_command.add_arguments(bench)

    kernelbench = sub.add_parser("kernelbench",
                                 help="a KernelBench task file in, a ModelNew file of DICE kernels out")
    kernelbench_command.add_arguments(kernelbench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "generate":
            return _generate(args)
        if args.command == "check":
            return _check(args)
        if args.command == "bench":
            return bench_command.run(args)
        if args.command == "kernelbench":
            return kernelbench_command.run(args)
        return _doctor(args)
    except UsageError as e:
        print(f"dice {args.command}: error: {e}", file=sys.stderr)
        return 2
    except USER_ERRORS as e:
        print(f"dice {args.command}: {one_line(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"dice {args.command}: interrupted", file=sys.stderr)
        return 130


# -- generate ------------------------------------------------------------------------------------

def _generator(args: argparse.Namespace) -> CUDAGenerator:
    if args.budget is not None and args.budget < 1:
        raise UsageError("--budget must be at least 1")
    try:
        resolve(args.arch)
    except UnknownTarget as e:
        raise UsageError(str(e)) from None
    kwargs: dict[str, Any] = {"seed": args.seed, "default_shape": None, "llm": _llm_config(args),
                              "prior": args.prior}
    if args.budget is not None:
        kwargs["budget"] = args.budget
    return CUDAGenerator(args.arch, **kwargs)


def _llm_config(args: argparse.Namespace) -> LLMConfig:
    config = from_environment(LLMConfig(
        backend=args.llm_backend, base_url=args.llm or "", model=args.model or "",
        model_path=args.llm_model_path or "", use=args.llm_use, rounds=args.llm_rounds,
        timeout_s=args.llm_timeout, max_tokens=args.llm_max_tokens, temperature=args.llm_temperature,
        trust_remote_code=args.trust_remote_code, diffusion_steps=args.diffusion_steps,
        block_length=args.block_length))
    try:
        return config.validated()
    except ConfigError as e:
        raise UsageError(str(e)) from None


def _attach_gpu(generator: CUDAGenerator, stack: ExitStack) -> None:
    """Verify and time on the GPU when there is one (the pool starts only when needed)."""
    from .runner import GpuRunner
    runner = stack.enter_context(GpuRunner())
    generator.runner = runner if runner.available() else None


def _generate(args: argparse.Namespace) -> int:
    is_file = Path(args.target).suffix in CUDA_SUFFIXES and "\n" not in args.target
    if args.write and not is_file:
        raise UsageError("--write needs a .cu/.cuh file")
    generator = _generator(args)
    with ExitStack() as stack:
        if is_file:
            return _generate_file(args, generator, stack)
        program, notes = generator.parse(args.target)
        on_result = _progress_printer(args)      # says it has started before the GPU child starts
        _attach_gpu(generator, stack)
        result = generator.generate_program(program, notes, on_result=on_result)
    if args.out:
        Path(args.out).write_text(result.source)
    if args.format == "json":
        print(json.dumps(result.to_json()))
    else:
        if not args.out:
            print(result.source)
        print(_report(result))
    return 0


def _generate_file(args: argparse.Namespace, generator: CUDAGenerator, stack: ExitStack) -> int:
    path = Path(args.target)
    try:
        text = path.read_text()
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from None
    on_result = _progress_printer(args)
    _attach_gpu(generator, stack)
    new_text, reports = generate_file(text, generator=generator, on_result=on_result)
    if args.write:
        if new_text != text:
            path.write_text(new_text)
    elif args.out:
        Path(args.out).write_text(new_text)
    elif args.format == "text":
        print(new_text, end="")
    if args.format == "json":
        print(json.dumps({"file": str(path), "source": None if args.write or args.out else new_text,
                          "intents": [r.to_json() for r in reports]}))
    else:
        for r in reports:
            print(_file_report(path, r), file=sys.stderr if args.write or args.out else sys.stdout)
    return 1 if any(r.status == "error" for r in reports) else 0


def _progress_printer(args: argparse.Namespace) -> Callable[[GenerationResult], None] | None:
    """A line on stderr per improvement, so that a cold run (every candidate built by nvcc, nothing
    cached yet) shows that it is working."""
    if not (args.progress if args.progress is not None else sys.stderr.isatty()):
        return None
    start = time.monotonic()
    print("dice generate: searching: nvcc builds each candidate, a GPU (if any) verifies and times it; "
          "the first run, with empty caches and this GPU's ceilings still to measure, is the slowest",
          file=sys.stderr, flush=True)

    def show(result: GenerationResult) -> None:
        took = time.monotonic() - start
        timing = (f"{result.time_us:.1f} us measured" if result.time_us is not None
                  else f"~{result.cost_us:.1f} us estimated")
        tried = len(result.history)
        print(f"dice generate: `{result.name}` round {result.round}: {result.sketch}, {timing} "
              f"({tried} candidate{'s' if tried != 1 else ''}, {took:.1f} s)", file=sys.stderr, flush=True)
    return show


def _file_report(path: Path, report: FileReport) -> str:
    head = f"// {path}:{report.line + 1}: {report.status}"
    if report.result is None:
        return f"{head}: {report.message}"
    return f"{head} `{report.result.name}`\n{_report(report.result)}"


def _report(r: GenerationResult) -> str:
    """The short report, as C++ comments so that stdout stays a valid CUDA file."""
    return "\n".join("// " + line for line in r.report())


# -- check ---------------------------------------------------------------------------------------

def _check(args: argparse.Namespace) -> int:
    from .analysis import check_source, compiler_findings, merge, output
    from .intent_findings import file_intent_findings
    try:
        arch = resolve(args.arch).name      # "B200" → sm_100: nvcc and the tables take the arch name
    except UnknownTarget as e:
        raise UsageError(str(e)) from None
    findings = []
    for name in args.files:
        try:
            text = Path(name).read_text()
        except OSError as e:
            raise UsageError(f"cannot read {name}: {e.strerror}") from None
        static = check_source(text, name, arch)
        static += file_intent_findings(text, name, arch, stale_is_error=True)
        dynamic = compiler_findings(text, name, arch, include_paths=[str(Path(name).resolve().parent)])
        if args.gpu:
            dynamic += _sanitizer_findings(text, name)
        findings += merge(static, dynamic)
    formatter = {"text": output.to_text, "json": output.to_json, "sarif": output.to_sarif}[args.format]
    if text := formatter(findings):
        print(text)
    return 1 if any(f.severity == "error" for f in findings) else 0


def _sanitizer_findings(text: str, name: str) -> list[Finding]:
    """compute-sanitizer on the file's own program (it needs a main()), built for this GPU."""
    from .runner import doctor
    from .runner.sanitizer import sanitize_command
    if not doctor()["gpu"]["found"]:
        print(f"dice check: {name}: no GPU, so --gpu checks were skipped", file=sys.stderr)
        return []
    if not re.search(r"\bint\s+main\s*\(", text):
        print(f"dice check: {name}: no main(), so nothing to run under compute-sanitizer", file=sys.stderr)
        return []
    folder = str(Path(name).resolve().parent)
    built = compile_cuda(text, "native", output="executable", flags=["-lineinfo"], include_paths=[folder],
                         filename=name)
    if not built.ok or built.artifact is None:
        return []    # the compiler findings already say why

    def where(file: str, line: int) -> tuple[str, int] | None:
        return (name, line - 1) if Path(file).name == TEMP_SOURCE else None

    try:
        return sanitize_command([str(built.artifact)], where=where, cwd=folder)
    except FileNotFoundError as e:
        print(f"dice check: {e}", file=sys.stderr)
        return []


# -- doctor --------------------------------------------------------------------------------------

def _doctor(args: argparse.Namespace) -> int:
    from .runner import doctor
    report = doctor()
    if args.format == "json":
        print(json.dumps(report))
        return 0
    for tool, facts in report.items():
        state = "found" if facts.get("found") else "missing"
        detail = ", ".join(f"{k}={v}" for k, v in facts.items() if k not in ("found", "hint") and v)
        hint = f"  ({facts['hint']})" if not facts.get("found") and facts.get("hint") else ""
        print(f"{tool:18} {state:8} {detail}{hint}")
    return 0 if report.get("nvcc", {}).get("found") else 1
