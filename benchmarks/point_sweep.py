"""Design-point sweeps beside PyTorch: each case forces a sketch and a point (instead of the
no-GPU pick that gemm_parity.py measures), and is checked and timed exactly as gemm_parity.py
does (inputs drawn as the runner draws them, output poisoned, error against PyTorch in float64,
CUDA-event medians with an L2-sized write before every run, PyTorch eager in the same child
process: cuBLAS for the products, torch.cumsum for the scans).

    python benchmarks/point_sweep.py [--sweep wgmma_tma|scan|simt] [--cases sq_,bat_] [--time-budget 240]

Prints one line per case as it finishes (verdict, µs, PyTorch µs, ratio, errors, point). A case
whose point is None takes the sketch's default point.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gemm_parity  # noqa: E402

from dice_engine.arch import resolve  # noqa: E402
from dice_engine.bench.plan import sketch_named  # noqa: E402
from dice_engine.intent import default_kernel_name, parse_intent  # noqa: E402
from dice_engine.ir.patterns import classify  # noqa: E402
from dice_engine.runner.inputs import intent_bindings  # noqa: E402
from dice_engine.runner.metrics import flops  # noqa: E402

SQUARE = "C = A @ B; A: f16[4096, 4096]; B: f16[4096, 4096]"
RECT = "C = A @ B; A: bf16[8192, 2048]; B: bf16[2048, 4096]"
BATCHED = "C = A @ B; A: f16[32, 1024, 1024]; B: f16[32, 1024, 1024]"


def _tma(bm: int, bn: int, consumers: int, stages: int, persistent: int = 1,
         pingpong: int = 0) -> dict[str, int]:
    return {"block_m": bm, "block_n": bn, "consumers": consumers, "stages": stages, "persistent": persistent,
            "pingpong": pingpong}


def _wgmma_tma_sweep() -> list[tuple[str, str, str, dict[str, int] | None]]:
    cases: list[tuple[str, str, str, dict[str, int] | None]] = []
    for tag, intent in (("sq", SQUARE), ("rect", RECT), ("bat", BATCHED)):
        cases.append((f"{tag}_cp_async", intent, "gemm.wgmma", None))
        for label, point in (("128x256x4", _tma(128, 256, 2, 4)), ("128x256x4_p0", _tma(128, 256, 2, 4, 0)),
                             ("256x128x4", _tma(256, 128, 2, 4)), ("128x256x3", _tma(128, 256, 2, 3)),
                             ("128x128x6", _tma(128, 128, 2, 6)), ("pp128x128x4", _tma(128, 128, 2, 4, 1, 1)),
                             ("pp64x256x4", _tma(64, 256, 2, 4, 1, 1))):
            cases.append((f"{tag}_{label}", intent, "gemm.wgmma_tma", point))
    return cases


def _scan_sweep() -> list[tuple[str, str, str, dict[str, int] | None]]:
    """Row scans: KernelBench level 1's 32768 rows of 32768 (89-93), a few rows of a million
    (the hand-off chain of the one-pass scan is long), and rows short enough for a warp."""
    kb, few, some, short = (f"y = cumsum(x, dim=1); x: f32[{r}, {n}]"
                            for r, n in ((32768, 32768), (4, 1000000), (64, 1000000), (4096, 8192)))
    reverse = "y = flip(cumsum(flip(x, dims=[1]), dim=1), dims=[1]); x: f32[32768, 32768]"
    cases: list[tuple[str, str, str, dict[str, int] | None]] = [
        ("kb_block", kb, "scan.block_row", None), ("kb_multi", kb, "scan.multi_block_row", None),
        ("kb_rev_chained", reverse, "scan.chained_row", None)]
    for threads, items, chunks in ((256, 4, 4), (256, 4, 8), (256, 4, 16), (128, 4, 8), (512, 4, 4),
                                   (512, 4, 2), (1024, 4, 2), (256, 2, 8)):
        point = {"threads": threads, "items": items, "chunks": chunks}
        cases.append((f"kb_chained_{threads}x{items}x{chunks}", kb, "scan.chained_row", point))
    for tag, intent in (("few", few), ("some", some)):
        cases += [(f"{tag}_multi", intent, "scan.multi_block_row", None),
                  (f"{tag}_chained", intent, "scan.chained_row", None)]
    cases += [("short_warp", short, "scan.warp_row", None), ("short_block", short, "scan.block_row", None),
              ("short_chained", short, "scan.chained_row", None)]
    return cases


def _simt(bm: int, bn: int, bk: int, vector: int, buffering: int, k_splits: int = 1,
          tm: int = 8, tn: int = 8) -> dict[str, int]:
    return {"block_m": bm, "block_n": bn, "block_k": bk, "thread_m": tm, "thread_n": tn, "vector": vector,
            "buffering": buffering, "k_splits": k_splits}


def _simt_sweep() -> list[tuple[str, str, str, dict[str, int] | None]]:
    """fp32 CUDA-core GEMMs at KernelBench's shapes: the default point, then register double
    buffering against cp.async rings of 3 and 4 slices on the same tiles. `w128` is level 2's
    Linear over 32768 features at batch 128 (the weight streams from DRAM once), `lin` its
    1024 x 8192 x 8192 Linear."""
    shapes = {
        "sq": "C = A @ B; A: f32[4096, 4096]; B: f32[4096, 4096]",
        "rect": "C = A @ B; A: f32[2048, 8192]; B: f32[8192, 4096]",
        "bat": "C = A @ B; A: f32[128, 512, 1024]; B: f32[128, 1024, 2048]",
        "irr": "C = A @ B; A: f32[8205, 2949]; B: f32[2949, 5921]",
        "atb": "C = A.T @ B; A: f32[8192, 2048]; B: f32[8192, 4096]",
        "abt": "C = A @ B.T; A: f32[2048, 8192]; B: f32[4096, 8192]",
        "w128": "y = x @ W.T + b; x: f32[128, 32768]; W: f32[32768, 32768]; b: f32[32768]",
        "lin": "y = x @ W.T + b; x: f32[1024, 8192]; W: f32[8192, 8192]; b: f32[8192]",
        "bigk": "C = A @ B; A: f32[256, 524288]; B: f32[524288, 256]",
    }
    cases: list[tuple[str, str, str, dict[str, int] | None]] = []
    for tag, intent in shapes.items():
        cases.append((f"{tag}_default", intent, "gemm.simt_tiled", None))
        vector = 1 if tag == "irr" else 4   # 2949 and 5921 are odd: scalar loads only
        splits = 64 if tag == "bigk" else 1
        for buffering in (2, 3, 4):
            cases.append((f"{tag}_128x128x8_v{vector}_b{buffering}", intent, "gemm.simt_tiled",
                          _simt(128, 128, 8, vector, buffering, splits)))
        if tag != "irr":   # 16-deep slices: the ring passes 48 KiB (dynamic shared memory)
            for buffering in (2, 3, 4):
                cases.append((f"{tag}_128x128x16_v4_b{buffering}", intent, "gemm.simt_tiled",
                              _simt(128, 128, 16, 4, buffering, splits)))
        if tag == "w128":
            cases.append((f"{tag}_128x128x8_v1_b4", intent, "gemm.simt_tiled", _simt(128, 128, 8, 1, 4)))
    return cases


SWEEPS = {"wgmma_tma": _wgmma_tma_sweep, "scan": _scan_sweep, "simt": _simt_sweep}


def _row(case: tuple[str, str, str, dict[str, int] | None], arch: str) -> gemm_parity.Row:
    name, intent, sketch_name, point = case
    program = parse_intent(intent)
    problem = classify(program)
    sketch = sketch_named(sketch_name)
    chosen = point or sketch.default_point(problem, resolve(arch))
    row = gemm_parity.Row(name, "sweep", intent, sketch=sketch_name, tokens=dict(chosen))
    row.gflop = (flops(problem, intent_bindings(program)) or 0) * 1e-9 or None
    rendered = sketch.render(problem, resolve(arch), chosen, default_kernel_name(program))
    return gemm_parity.compile_into(row, rendered, arch)


def _line(row: gemm_parity.Row) -> str:
    ratio = row.of_library
    return (f"{row.case:24} {row.verdict:10} {row.dice_us or 0:9.1f} us  torch {row.torch_us or 0:9.1f} us  "
            f"{f'{ratio:.1%}' if ratio else '-':>6}  err {row.dice_err} (torch {row.torch_err})  "
            f"{row.sketch} {row.tokens} {row.detail[:200]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", default="wgmma_tma", choices=sorted(SWEEPS))
    parser.add_argument("--cases", default="", help="comma-separated substrings of case names")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--time-budget", type=float, default=240.0,
                        help="no case starts after this many seconds")
    parser.add_argument("--case-timeout", type=float, default=60.0)
    args = parser.parse_args(argv)
    if (why := gemm_parity._cuda_missing()) is not None:
        print(f"point_sweep.py: needs a CUDA GPU with PyTorch ({why})", file=sys.stderr)
        return 2
    wanted = [c for c in args.cases.split(",") if c]
    cases = [c for c in SWEEPS[args.sweep]() if not wanted or any(w in c[0] for w in wanted)]
    started = time.monotonic()
    with ThreadPoolExecutor(os.cpu_count() or 4) as pool:
        rows: list[gemm_parity.Row] = list(pool.map(lambda c: _row(c, args.arch), cases))
    print(f"built {len(rows)} kernels in {time.monotonic() - started:.0f} s", flush=True)
    for row in rows:
        if not row.library:
            print(_line(row), flush=True)
    gemm_parity.run_cases(rows, command=lambda path: gemm_parity.child_command(path, 0),
                          case_timeout=args.case_timeout, ends_at=started + args.time_budget,
                          workdir=Path(tempfile.mkdtemp()), on_row=lambda row: print(_line(row), flush=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
