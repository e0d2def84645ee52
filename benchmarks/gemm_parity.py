"""GEMM parity with cuBLAS: the kernel `dice generate --arch sm_90` picks without a GPU, checked
against a float64 truth and timed beside torch.matmul (cuBLAS, TF32 off unless the case opts in)
at KernelBench level 1's GEMM / batched GEMM / GEMV shapes, plus fp16/bf16 products on tensor
cores and one opt-in TF32 product.

    python benchmarks/gemm_parity.py [--cases kb1,f16] [--time-budget 420]
                                     [--out benchmarks/GEMM_PARITY.md] [--dry-run]

1. Every kernel is generated first, on the CPU, through the engine's public API with no runner
   (the editor's no-GPU path), re-rendered for its launcher's parameters and compiled in parallel
   (nvcc's disk cache keeps the libraries: $DICE_CACHE_DIR, else ~/.cache/dice).
2. A child process then runs the cases one by one, each under a deadline (a hung or crashed
   kernel costs its case, not the run; the child is restarted for the rest). Per case: inputs
   drawn as the runner draws them, the DICE output poisoned with NaN before its launch, the
   relative Frobenius error ‖out − truth‖ / ‖truth‖ of DICE's output and of PyTorch's own (same
   dtype) output against PyTorch in float64 on the same inputs, then both timed the runner's way
   (`runner.torch_timing.TorchTimer`: CUDA events around the call, warm-up, an L2-sized write
   before every run, median).
A case passes when every element is written and finite and DICE's error is at most twice
PyTorch's. Results are written after every case (markdown table and JSON beside it); once
`--time-budget` seconds have passed, no further case starts and the rest are listed as not run.
Without CUDA it exits with one line (`--dry-run` generates and compiles only, on any machine).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dice_engine.api import CUDAGenerator, GenerationError  # noqa: E402
from dice_engine.arch import resolve  # noqa: E402
from dice_engine.bench.plan import sketch_named  # noqa: E402
from dice_engine.intent import default_kernel_name, parse_intent  # noqa: E402
from dice_engine.ir.patterns import classify  # noqa: E402
from dice_engine.runner.build import build_library, launcher_symbol  # noqa: E402
from dice_engine.runner.inputs import intent_bindings  # noqa: E402
from dice_engine.runner.metrics import flops  # noqa: E402
from dice_engine.sketches.base import RenderedKernel  # noqa: E402

PROG = "gemm_parity.py"


@dataclass(frozen=True)
class Case:
    name: str
    source: str  # where the shape comes from: "KB n" (KernelBench level-1 task n) or "extra"
    intent: str


def _mm(a: str, b: str, expr: str = "C = A @ B") -> str:
    return f"{expr}; A: {a}; B: {b}"


# KernelBench level 1's matrix products at their exact shapes (tasks 1-4, 6-11, 13-18), then the
# low-precision products issue 14 names and the opt-in TF32 square product (beside cuBLAS in TF32);
# task 12 (diag(a) @ B) comes last.
CASES: list[Case] = [
    Case("kb1_square", "KB 1", _mm("f32[4096, 4096]", "f32[4096, 4096]")),
    Case("kb2_rect", "KB 2", _mm("f32[2048, 8192]", "f32[8192, 4096]")),
    Case("kb3_batched", "KB 3", _mm("f32[128, 512, 1024]", "f32[128, 1024, 2048]")),
    Case("kb4_gemv", "KB 4", _mm("f32[2048, 1048576]", "f32[1048576, 1]")),
    Case("kb6_large_k", "KB 6", _mm("f32[256, 524288]", "f32[524288, 256]")),
    Case("kb7_small_k", "KB 7", _mm("f32[32768, 64]", "f32[64, 32768]")),
    Case("kb8_irregular", "KB 8", _mm("f32[8205, 2949]", "f32[2949, 5921]")),
    Case("kb9_tall_skinny", "KB 9", _mm("f32[32768, 32]", "f32[32, 32768]")),
    Case("kb10_3d_2d", "KB 10", _mm("f32[16, 1024, 2048]", "f32[2048, 768]")),
    Case("kb11_4d_2d", "KB 11", _mm("f32[8, 256, 512, 256]", "f32[256, 768]")),
    Case("kb13_symmetric", "KB 13", _mm("f32[4096, 4096]", "f32[4096, 4096]")),
    Case("kb14_triu", "KB 14", _mm("f32[4096, 4096]", "f32[4096, 4096]", "C = triu(A @ B)")),
    Case("kb15_tril", "KB 15", _mm("f32[4096, 4096]", "f32[4096, 4096]", "C = tril(A @ B)")),
    Case("kb16_At_B", "KB 16", _mm("f32[8192, 2048]", "f32[8192, 4096]", "C = A.T @ B")),
    Case("kb17_A_Bt", "KB 17", _mm("f32[2048, 8192]", "f32[4096, 8192]", "C = A @ B.T")),
    Case("kb18_At_Bt", "KB 18", _mm("f32[8192, 2048]", "f32[4096, 8192]", "C = A.T @ B.T")),
    # KernelBench level 2's 55, 56 and 59: a Linear over 32768 features at batch 128 (W streams once)
    Case("l2_linear_128x32768", "KB2 55",
         "y = x @ W.T + b; x: f32[128, 32768]; W: f32[32768, 32768]; b: f32[32768]"),
    Case("f16_square", "extra", _mm("f16[4096, 4096]", "f16[4096, 4096]")),
    Case("bf16_square", "extra", _mm("bf16[4096, 4096]", "bf16[4096, 4096]")),
    Case("f16_rect", "extra", _mm("f16[8192, 2048]", "f16[2048, 4096]")),
    Case("bf16_rect", "extra", _mm("bf16[8192, 2048]", "bf16[2048, 4096]")),
    Case("f16_batched", "extra", _mm("f16[32, 1024, 1024]", "f16[32, 1024, 1024]")),
    Case("bf16_batched", "extra", _mm("bf16[32, 1024, 1024]", "bf16[32, 1024, 1024]")),
    Case("tf32_square", "extra", _mm("f32[4096, 4096]", "f32[4096, 4096]") + "; precision=tf32"),
    # last: a product with diag(a) is a broadcast multiply that only the general lowering serves
    Case("kb12_diag", "KB 12", "C = diag(A) @ B; A: f32[4096]; B: f32[4096, 4096]"),
]


@dataclass
class Row:
    case: str
    source: str
    intent: str
    sketch: str = ""
    tokens: dict[str, Any] = field(default_factory=dict)
    cost_us: float | None = None  # the cost model's estimate that made the pick
    gflop: float | None = None
    verdict: str = "not run"  # ok | wrong | unwritten | not served | compile error | timeout | crash ...
    detail: str = ""
    dice_us: float | None = None
    torch_us: float | None = None
    dice_err: float | None = None  # ‖out − truth‖ / ‖truth‖, truth = PyTorch in float64
    torch_err: float | None = None  # the same for PyTorch's own output in the operands' dtype
    library: str = ""
    symbol: str = ""
    roles: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)

    @property
    def of_library(self) -> float | None:
        return self.torch_us / self.dice_us if self.dice_us and self.torch_us else None

    @property
    def tflops(self) -> float | None:
        # GFLOP per µs is 1e3 TFLOP/s
        return self.gflop / self.dice_us * 1e3 if self.gflop and self.dice_us else None

    @property
    def err_ratio(self) -> float | None:
        if self.dice_err is None or not self.torch_err:
            return None
        return self.dice_err / self.torch_err


# -- 1. generate and compile (no GPU) ------------------------------------------------------------


def generate(case: Case, arch: str, budget: int | None) -> Row:
    """The no-GPU pick for `case` (as `dice generate --arch <arch>` makes it), rendered again for
    its launcher's parameters."""
    row = Row(case.name, case.source, case.intent)
    program = parse_intent(case.intent)
    problem = classify(program)
    row.gflop = (flops(problem, intent_bindings(program)) or 0) * 1e-9 or None
    kwargs: dict[str, Any] = {"default_shape": None}
    if budget is not None:
        kwargs["budget"] = budget
    try:
        result = CUDAGenerator(arch, **kwargs).generate_program(program)
    except GenerationError as exc:
        row.verdict, row.detail = "not served", str(exc)
        return row
    row.sketch, row.tokens, row.cost_us = result.sketch, dict(result.tokens), result.cost_us
    rendered = sketch_named(result.sketch).render(
        problem, resolve(arch), result.tokens, default_kernel_name(program)
    )
    if rendered.source != result.source:
        row.verdict, row.detail = "render mismatch", "re-rendering the pick gave another source"
        return row
    return compile_into(row, rendered, arch)


def compile_into(row: Row, rendered: RenderedKernel, arch: str) -> Row:
    """`row` with the launcher's symbol and parameters of `rendered` and its compiled library
    (or the compile error as its verdict)."""
    row.symbol = launcher_symbol(rendered)
    row.roles, row.names = [p.role for p in rendered.params], [p.name for p in rendered.params]
    built = build_library(rendered.source, rendered.compile_arch(arch), filename=f"{row.case}.cu")
    if built.library is None:
        row.verdict, row.detail = "compile error", built.error
    else:
        row.library = str(built.library)
    return row


# -- 2. run (child process, GPU) -------------------------------------------------------------------


def _relative_error(out: Any, truth: Any, chunk: int = 1 << 26) -> float:
    """‖out − truth‖ / ‖truth‖ in float64, a slice at a time (no full-size float64 temporaries)."""
    o, t = out.reshape(-1), truth.reshape(-1)
    diff = norm = 0.0
    for start in range(0, t.numel(), chunk):
        part = t[start : start + chunk]
        diff += float((o[start : start + chunk].double() - part).square().sum())
        norm += float(part.square().sum())
    return math.sqrt(diff / norm) if norm else math.inf


def child_job(row: Row) -> dict[str, Any]:
    """What a child process needs to load and launch a compiled pick."""
    return {"case": row.case, "intent": row.intent, "library": row.library, "symbol": row.symbol,
            "roles": row.roles, "names": row.names}


def launch_args(job: dict[str, Any], inputs: dict[str, Any], out: Any, bindings: dict[str, int]) -> list[int]:
    """The launcher's arguments: tensors' device pointers and symbol values in its parameters'
    order, then the legacy default stream (the one torch's events record on)."""
    args = [inputs[name].data_ptr() if role == "input" else out.data_ptr() if role == "output"
            else bindings[name] for role, name in zip(job["roles"], job["names"])]
    return args + [0]


def measure(job: dict[str, Any], seed: int) -> dict[str, Any]:
    """Check and time one compiled pick beside PyTorch (runs in the child)."""
    import torch

    from dice_engine.runner.child import DeviceError, Launcher
    from dice_engine.runner.torch_program import torch_function
    from dice_engine.runner.torch_timing import TorchTimer, time_eager, torch_inputs

    program = parse_intent(job["intent"])
    timer = TorchTimer(torch.cuda.get_device_properties(0).L2_cache_size)  # turns TF32 off ...
    # ... unless the intent opts in: then cuBLAS runs TF32 too, its error and time the baseline
    torch.backends.cuda.matmul.allow_tf32 = program.options.get("precision") == "tf32"
    inputs = torch_inputs(program, intent_bindings(program), seed)
    fn = torch_function(program)
    truth = fn({k: v.double() for k, v in inputs.items()})
    ours = fn(inputs)
    torch_err = _relative_error(ours, truth)
    out = torch.full_like(ours, math.nan)
    del ours
    launcher = Launcher(job["library"], job["symbol"], job["roles"])
    args = launch_args(job, inputs, out, intent_bindings(program))
    try:
        launcher.fn(*args)
        launcher.check(launcher.last_error(), "at launch")
        launcher.check(launcher.synchronize(), "while running")
    except DeviceError as exc:
        return {"verdict": exc.verdict, "detail": exc.detail, "torch_err": torch_err}
    result: dict[str, Any] = {"torch_err": torch_err}
    if bool(out.isnan().any()):
        return result | {"verdict": "unwritten", "detail": "NaN left in the output (unwritten or not finite)"}
    result["dice_err"] = dice_err = _relative_error(out, truth)
    del truth
    result["dice_us"] = timer.median_us(lambda: launcher.fn(*args))
    launcher.check(launcher.synchronize(), "while timing")
    result["torch_us"] = time_eager(program, inputs, timer)
    ok = math.isfinite(dice_err) and dice_err <= 2 * max(torch_err, 1e-12)
    result["verdict"] = "ok" if ok else "wrong"
    if not ok:
        result["detail"] = f"error {dice_err:.2e} is over twice PyTorch's {torch_err:.2e}"
    return result


def child_main(jobs_path: str, seed: int) -> int:
    """Run the jobs in order; one JSON line when a case starts and one with its result."""
    import torch

    for job in json.loads(Path(jobs_path).read_text()):
        print(json.dumps({"event": "start", "case": job["case"]}), flush=True)
        try:
            result = measure(job, seed)
        except torch.cuda.OutOfMemoryError as exc:
            result = {"verdict": "out-of-memory", "detail": str(exc).splitlines()[0]}
        except Exception as exc:  # a failing case is reported, and the child goes on to the next
            result = {"verdict": "error", "detail": f"{type(exc).__name__}: {exc}"}
        torch.cuda.empty_cache()
        print(json.dumps({"event": "done", "case": job["case"], **result}), flush=True)
    return 0


class ChildRun:
    """A child over a list of jobs, read line by line with a deadline per message."""

    def __init__(self, command: list[str]):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=self.stderr, start_new_session=True
        )
        self.buffer = b""
        self.closed = False  # the child closed its output: it exited or is exiting

    def next_line(self, deadline: float) -> dict[str, Any] | None:
        """The child's next message, or None when it exited or the deadline passed."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                self.closed = True
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except json.JSONDecodeError:  # stray output of a library on stdout: skip it
            return self.next_line(deadline)

    def stderr_tail(self, limit: int = 400) -> str:
        self.stderr.seek(0, os.SEEK_END)
        self.stderr.seek(max(0, self.stderr.tell() - limit))
        return " ".join(self.stderr.read().decode(errors="replace").split())

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.proc.stdout.close()
        self.stderr.close()


def child_command(jobs_path: Path, seed: int) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", str(jobs_path), "--seed", str(seed)]


def run_cases(
    rows: list[Row],
    *,
    command: Callable[[Path], list[str]],
    case_timeout: float,
    ends_at: float,
    workdir: Path,
    on_row: Callable[[Row], None],
) -> None:
    """Measure every compiled row in child processes: a case that hangs past `case_timeout` or
    kills its child is reported as such and a new child takes the rest. No case starts after
    `ends_at`; those left are "not run"."""
    pending = [r for r in rows if r.library]
    while pending and time.monotonic() < ends_at:
        path = workdir / f"jobs_{pending[0].case}.json"
        path.write_text(json.dumps([child_job(r) for r in pending]))
        if not _serve(ChildRun(command(path)), pending, case_timeout, ends_at, on_row):
            return
    for r in pending:
        r.verdict, r.detail = "not run", "time budget spent"
        on_row(r)


def _serve(
    child: ChildRun, pending: list[Row], case_timeout: float, ends_at: float, on_row: Callable[[Row], None]
) -> bool:
    """Read one child's results into `pending`'s rows (removing them); False when the child
    failed outside any case (every pending row is then marked, and nothing more can run)."""
    by_name = {r.case: r for r in pending}
    current: Row | None = None
    try:
        while pending:
            message = child.next_line(time.monotonic() + case_timeout)
            if message is None:
                break
            row = by_name[message["case"]]
            if message["event"] == "start":
                if time.monotonic() >= ends_at:
                    return True
                current = row
                continue
            for key in ("verdict", "detail", "dice_us", "torch_us", "dice_err", "torch_err"):
                if key in message:
                    setattr(row, key, message[key])
            pending.remove(row)
            current = None
            on_row(row)
        if not pending:
            return True
        hung = not child.closed
        if child.closed:
            child.proc.wait(timeout=30)
        tail = child.stderr_tail()
    finally:
        child.kill()
    if hung:
        verdict, detail = "timeout", f"no result within {case_timeout:g} s; the child was killed"
    else:
        verdict, detail = "crash", f"the child exited ({child.proc.returncode}): {tail}"
    for r in [current] if current is not None else list(pending):
        r.verdict, r.detail = (
            verdict,
            detail if current is not None else f"{detail} (before any case started)",
        )
        pending.remove(r)
        on_row(r)
    return current is not None


# -- report ---------------------------------------------------------------------------------------------


def _f(value: float | None, spec: str) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def _tokens(tokens: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in tokens.items())


def line_of(row: Row) -> str:
    return (
        f"{row.case:16} {row.verdict:12} DICE {_f(row.dice_us, '10.1f')} us  cuBLAS "
        f"{_f(row.torch_us, '10.1f')} us  {_f(row.of_library, '6.0%')}  err {_f(row.dice_err, '.1e')} "
        f"(torch {_f(row.torch_err, '.1e')})  {row.sketch}"
    )


def to_markdown(rows: list[Row], meta: dict[str, Any]) -> str:
    lines = [
        "# GEMM parity with cuBLAS (issue 14)",
        "",
        f"- date: {meta['date']}; GPU: {meta['gpu']}; torch {meta['torch']}; picks for {meta['arch']}",
        "- DICE: the kernel `dice generate --arch sm_90` picks without a GPU (cost model only), "
        "compiled once; PyTorch: torch.matmul (cuBLAS), TF32 off (on for the precision=tf32 case).",
        "- time: median of CUDA-event timings after warm-up, an L2-sized write before every run "
        "(`runner.torch_timing.TorchTimer`), DICE and PyTorch in the same child process.",
        "- error: ‖out − truth‖ / ‖truth‖ with truth = PyTorch in float64 on the same inputs; "
        "pass = every element written and DICE's error ≤ 2 × PyTorch's own.",
        "- produced by `python benchmarks/gemm_parity.py` (see its docstring).",
        "",
        "| case | from | intent | sketch (tokens) | DICE µs | cuBLAS µs | of cuBLAS | DICE TFLOP/s "
        "| DICE err | torch err | verdict |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        verdict = r.verdict + (f": {r.detail[:160]}" if r.detail and r.verdict != "ok" else "")
        lines.append(
            "| "
            + " | ".join(
                [
                    r.case,
                    r.source,
                    f"`{r.intent}`",
                    f"{r.sketch or '—'} ({_tokens(r.tokens)})",
                    _f(r.dice_us, ".1f"),
                    _f(r.torch_us, ".1f"),
                    _f(r.of_library, ".0%"),
                    _f(r.tflops, ".1f"),
                    _f(r.dice_err, ".1e"),
                    _f(r.torch_err, ".1e"),
                    verdict.replace("|", "/"),
                ]
            )
            + " |"
        )
    timed = [r.of_library for r in rows if r.of_library and r.verdict == "ok"]
    if timed:
        geo = math.exp(sum(map(math.log, timed)) / len(timed))
        lines += [
            "",
            f"- {len(timed)} of {len(rows)} cases verified and timed; geometric mean "
            f"{geo:.0%} of cuBLAS, lowest {min(timed):.0%}",
        ]
    return "\n".join(lines) + "\n"


def write(rows: list[Row], meta: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(to_markdown(rows, meta))
    public = [asdict(r) | {"of_library": r.of_library, "tflops": r.tflops} for r in rows]
    for r in public:
        del r["library"], r["roles"], r["names"], r["symbol"]
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": public}, indent=1))


# -- main -------------------------------------------------------------------------------------------------


def _cuda_missing() -> str | None:
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed"
    return None if torch.cuda.is_available() else "no CUDA device"


def select_cases(spec: str) -> list[Case]:
    """The cases whose names contain one of the comma-separated substrings (all when none)."""
    wanted = [w for w in spec.split(",") if w]
    unknown = [w for w in wanted if not any(w in c.name for c in CASES)]
    if unknown:
        raise ValueError(f"no case matches: {', '.join(unknown)}")
    return [c for c in CASES if not wanted or any(w in c.name for w in wanted)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", default="", help="comma-separated substrings of case names")
    parser.add_argument("--out", default="benchmarks/GEMM_PARITY.md", help="markdown table (JSON beside it)")
    parser.add_argument(
        "--time-budget",
        type=float,
        default=420.0,
        help="seconds after which no further case starts (generation included)",
    )
    parser.add_argument("--case-timeout", type=float, default=90.0, help="seconds one case may run")
    parser.add_argument("--arch", default="sm_90", help="the target the picks are generated for")
    parser.add_argument("--budget", type=int, default=None, help="the search's budget (dice generate's)")
    parser.add_argument(  # each search runs its own nvcc pool: half the cores' searches fill the machine
        "--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2), help="searches run in parallel"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dry-run", action="store_true", help="generate and compile only (no GPU needed)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child_main(args.child, args.seed)
    started = time.monotonic()
    ends_at = started + args.time_budget
    try:
        cases = select_cases(args.cases)
    except ValueError as exc:
        parser.error(str(exc))
    if not args.dry_run and (why := _cuda_missing()) is not None:
        print(
            f"{PROG}: needs a CUDA GPU with PyTorch ({why}); --dry-run generates and compiles only",
            file=sys.stderr,
        )
        return 1
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(lambda c: generate(c, args.arch, args.budget), cases))
    print(f"generated and compiled {len(rows)} picks in {time.monotonic() - started:.0f} s", flush=True)
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "arch": args.arch,
        "gpu": "none (dry run)",
        "torch": "—",
        "seed": args.seed,
    }
    if args.dry_run:
        for r in rows:
            print(
                f"{r.case:16} {r.sketch or r.verdict:24} cost {_f(r.cost_us, '9.1f')} us  {_tokens(r.tokens)}"
            )
        return 0
    import torch

    meta |= {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__}
    out = Path(args.out)

    def reported(row: Row) -> None:
        print(line_of(row), flush=True)
        write(rows, meta, out)

    with tempfile.TemporaryDirectory(prefix="gemm_parity_") as workdir:
        run_cases(
            rows,
            command=lambda path: child_command(path, args.seed),
            case_timeout=args.case_timeout,
            ends_at=ends_at,
            workdir=Path(workdir),
            on_row=reported,
        )
    write(rows, meta, out)
    print(f"\nwrote {out} and {out.with_suffix('.json')} in {time.monotonic() - started:.0f} s\n")
    print(to_markdown(rows, meta))
    return 0 if all(r.verdict == "ok" for r in rows) else 2


if __name__ == "__main__":
    sys.exit(main())
