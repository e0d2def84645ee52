#!/usr/bin/env python3
"""Confirm the corpus's expected findings dynamically on a GPU.

For each defective kernel of tests/corpus, generate a host `main` that fills every pointer
parameter with random data and launches the kernel (block size from the file's launch site or
`__launch_bounds__`, as the analyses read it), compile it with `nvcc -lineinfo`, and check each
expectation with the tool that can see it:

  race            compute-sanitizer --tool racecheck   (hazard reported at the expected line)
  sync            compute-sanitizer --tool synccheck   (barrier error, or the launch hangs)
  coalescing      ncu: global sectors per request      (above the ideal for the element size)
  bank-conflict   ncu: shared-memory bank conflicts    (> 0 for the kernel)
  precision       the kernel's PTX converts float to double (needs only nvcc); half/bf16
                  accumulators and lossy atomics: a numeric run against a float64 reference
                  (precision_numeric.py), the kernel's error at least 10x its fixed twin's
  overflow        a run past 2^31 elements (overflow_launch.py): a fault or a wrong element

Prints one line per expectation (CONFIRMED / NOT SEEN / UNCHECKED) and a summary per category.
Usage: python tests/corpus/harness/confirm.py [--corpus DIR] [--only race,sync] [--arch sm_90] [--keep DIR]
       python tests/corpus/harness/confirm.py --ptx-only    (precision only; no GPU needed)
--corpus picks the annotated folder (default tests/corpus; tests/corpus_wild is the held-out one).
"""
from __future__ import annotations

import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_corpus import CORPUS, HELD_OUT, Expectation, expectations  # noqa: E402
import precision_numeric  # noqa: E402
import wild_cases  # noqa: E402
from overflow_launch import LAUNCHES, Launch, host_program  # noqa: E402

from dice_engine.analysis.simt import block_model  # noqa: E402
from dice_engine.analysis.syntax import (PRIMITIVE_SIZES, VECTOR_COMPONENTS, FileFacts, Function,  # noqa: E402
                                         file_facts, functions, new_parser)

N = 1000                        # integer size parameters: not a multiple of any block size, so tail
                                # blocks diverge; N * N elements still fit in a buffer
ELEMENTS = 1 << 22              # elements per buffer: generous, so no kernel runs off the end
TIMEOUT = 60                    # seconds per tool run; a divergent barrier may hang
GPU_CATEGORIES = ("race", "sync", "coalescing", "bank-conflict")
FLOAT_TYPES = {"float", "double", "half", "__half", "__nv_bfloat16", "float2", "float4", "__half2",
               "double2"}
NCU_METRICS = ",".join([
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"])


def hand_written(corpus: Path) -> tuple[dict[str, Launch], dict[str, precision_numeric.Check]]:
    """The corpus's hand-written overflow launches and numeric precision checks, by file name."""
    if corpus.resolve() == HELD_OUT.resolve():
        return wild_cases.LAUNCHES, wild_cases.CHECKS
    if corpus.resolve() == CORPUS.resolve():
        return LAUNCHES, precision_numeric.CHECKS
    return {}, {}


@dataclass
class Case:
    path: Path
    kernel: Function
    facts: FileFacts
    expected: list[Expectation]


def cases(only: set[str], corpus: Path = CORPUS) -> list[Case]:
    out = []
    for path in sorted(corpus.glob("*.cu")):
        expected, _ = expectations(path)
        expected = [e for e in expected if e.category in only]
        if not expected:
            continue
        tree = new_parser().parse(path.read_bytes())
        fns = functions(tree.root_node)
        facts = file_facts(tree.root_node, fns)
        for fn in fns:
            if not fn.is_kernel:
                continue
            mine = [e for e in expected if _covers(fn, e.line, fns)]
            if mine:
                out.append(Case(path, fn, facts, mine))
    return out


def _covers(kernel: Function, line: int, fns: list[Function]) -> bool:
    """The expectation lies in the kernel or in a __device__ function it calls."""
    spans = [kernel] + [f for f in fns if f.is_device and f.name.encode() in (kernel.body.text or b"")]
    return any(f.node.start_point[0] <= line <= f.node.end_point[0] for f in spans)


def host_main(case: Case) -> str:
    """A translation unit that includes the corpus file and launches the kernel once."""
    model = block_model(case.kernel, case.facts)
    bx, by, bz = model.dims
    # argv[1] = blocks per grid side; racecheck runs a tiny grid (it is ~10^5x slower)
    grid = "dim3(side, side)" if by > 1 else "dim3(side * side)"
    decls, args = [], []
    for i, (_, type_name, indirect) in enumerate(case.kernel.params):
        if indirect:
            size = case.facts.sizeof(type_name) or 4
            floating = int(type_name in FLOAT_TYPES)
            decls.append(f"    void* p{i}; cudaMalloc(&p{i}, (size_t){ELEMENTS} * {size});\n"
                         f"    fill(p{i}, (size_t){ELEMENTS} * {size}, {floating}, {size});")
            args.append(f"({type_name}*)p{i}")
        elif type_name in FLOAT_TYPES:
            args.append(f"({type_name})1.0f")
        else:
            args.append(f"({type_name}){N}")
    body = "\n".join(decls)
    return f"""#include "{case.path.resolve()}"
#include <cstdio>
#include <cstdlib>
#include <vector>

static void fill(void* dev, size_t bytes, int floating, int elem) {{
    std::vector<unsigned char> host(bytes);
    if (floating && elem == 4) {{
        float* f = reinterpret_cast<float*>(host.data());
        for (size_t i = 0; i < bytes / 4; ++i) f[i] = (float)(rand() % 1000) / 1000.0f - 0.5f;
    }} else if (floating && elem == 8) {{
        double* f = reinterpret_cast<double*>(host.data());
        for (size_t i = 0; i < bytes / 8; ++i) f[i] = (double)(rand() % 1000) / 1000.0 - 0.5;
    }} else {{
        for (size_t i = 0; i < bytes; ++i) host[i] = (unsigned char)(rand() % 64);   // small ints
    }}
    cudaMemcpy(dev, host.data(), bytes, cudaMemcpyHostToDevice);
}}

int main(int argc, char** argv) {{
    int side = argc > 1 ? atoi(argv[1]) : 8;
{body}
    {case.kernel.name}<<<{grid}, dim3({bx}, {by}, {bz})>>>({", ".join(args)});
    cudaError_t err = cudaDeviceSynchronize();
    printf("launch: %s\\n", cudaGetErrorString(err));
    return err == cudaSuccess ? 0 : 1;
}}
"""


def _run(cmd: list[str], timeout: int = TIMEOUT) -> tuple[int, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as exc:
        return -1, f"TIMEOUT after {timeout}s\n{exc.stdout or ''}{exc.stderr or ''}"


def build(case: Case, workdir: Path, arch: str) -> Path | None:
    src = workdir / f"{case.path.stem}_{case.kernel.name}.cu"
    src.write_text(host_main(case))
    exe = src.with_suffix("")
    rc, log = _run(["nvcc", f"-arch={arch}", "-lineinfo", "-o", str(exe), str(src)], timeout=300)
    if rc != 0:
        print(f"  compile failed for {src.name}:\n{log[-2000:]}")
        return None
    return exe


def _lines_reported(log: str, path: Path) -> set[int]:
    """0-based lines of `path` that compute-sanitizer names in its report."""
    return {int(m.group(1)) - 1 for m in re.finditer(rf"{re.escape(path.name)}:(\d+)", log)}


def check_sanitizer(case: Case, exe: Path, tool: str, category: str) -> dict[Expectation, str]:
    side = "1" if tool == "racecheck" else "8"
    extra = ["--racecheck-report", "all"] if tool == "racecheck" else []   # every hazard, both sides
    rc, log = _run(["compute-sanitizer", "--tool", tool, *extra, "--print-limit", "200", str(exe), side])
    lines = _lines_reported(log, case.path)
    hung = log.startswith("TIMEOUT")
    out = {}
    for e in case.expected:
        if e.category != category:
            continue
        if e.line in lines:
            out[e] = f"CONFIRMED ({tool} reports line {e.line + 1})"
        elif hung and category == "sync":
            out[e] = "CONFIRMED (the launch hangs: a barrier some threads never reach)"
        elif lines:
            out[e] = f"NOT SEEN at this line ({tool} reports lines {sorted(x + 1 for x in lines)})"
        else:
            out[e] = f"NOT SEEN ({tool}: no report; exit {rc})"
    return out


def check_ncu(case: Case, exe: Path) -> dict[Expectation, str]:
    rc, log = _run(["ncu", "--clock-control", "none", "--metrics", NCU_METRICS, "--kernel-name",
                    case.kernel.name, "--csv", "--page", "details", str(exe)], timeout=300)
    values = ncu_metrics(log)
    out = {}
    # the narrowest scalar a lane can load sets the ideal: 32 lanes x elem bytes over 32-byte sectors
    elem = min((scalar_size(case.facts, t) for _, t, indirect in case.kernel.params if indirect), default=4)
    for e in case.expected:
        if e.category == "bank-conflict":
            conflicts = sum(v for k, v in values.items() if "bank_conflicts" in k)
            out[e] = (f"CONFIRMED ({conflicts:.0f} shared bank conflicts)" if conflicts > 0
                      else f"NOT SEEN (0 bank conflicts; ncu exit {rc})")
        elif e.category == "coalescing":
            ratios = []
            for op in ("ld", "st"):
                sectors = values.get(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum", 0.0)
                requests = values.get(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum", 0.0)
                if requests:
                    ratios.append(sectors / requests)
            worst = max(ratios, default=0.0)
            ideal = max(1.0, 32 * elem / 32)
            figures = f"{worst:.1f} sectors per request, ideal {ideal:.0f}"
            # a coalesced access measures ~ideal; stride 2 measures ~2x less the odd partial request
            out[e] = (f"CONFIRMED ({figures})" if worst >= 1.5 * ideal
                      else f"NOT SEEN ({figures}; ncu exit {rc})")
    return out


def scalar_size(facts: FileFacts, type_name: str) -> int:
    """Bytes of the narrowest scalar inside `type_name` (a struct's fields, a vector's components)."""
    if type_name in VECTOR_COMPONENTS:
        return PRIMITIVE_SIZES[VECTOR_COMPONENTS[type_name]]
    fields = facts.structs.get(type_name)
    if fields:
        return min(scalar_size(facts, ft) for _, ft in fields)
    return facts.sizeof(type_name) or 4


def ncu_metrics(log: str) -> dict[str, float]:
    """Metric name -> value from ncu's `--csv --page details` rows (values carry thousands commas)."""
    values: dict[str, float] = {}
    rows = csv.reader(line for line in log.splitlines() if line.startswith('"'))
    header = next(rows, None)
    if header is None or "Metric Name" not in header:
        return values
    name_at, value_at = header.index("Metric Name"), header.index("Metric Value")
    for row in rows:
        if len(row) > value_at and row[name_at].startswith("l1tex__"):
            try:
                values[row[name_at]] = values.get(row[name_at], 0.0) + float(row[value_at].replace(",", ""))
            except ValueError:
                continue
    return values


def check_overflow(case: Case, workdir: Path, arch: str,
                   launches: dict[str, Launch]) -> dict[Expectation, str]:
    launch = launches.get(case.path.name)
    if launch is None:
        return {e: "UNCHECKED (no launch written for this file)" for e in case.expected}
    src = workdir / f"{case.path.stem}_overflow.cu"
    src.write_text(host_program(str(case.path.resolve()), case.kernel.name, launch))
    verdict = _program_verdict(src, arch, {"fault": "CONFIRMED", "wrong": "CONFIRMED", "correct": "NOT SEEN"},
                               "run past 2^31 elements: ")
    return {e: verdict for e in case.expected if e.category == "overflow"}


def _program_verdict(src: Path, arch: str, meaning: dict[str, str], detail_prefix: str = "") -> str:
    """Build and run a generated host program; map its `VERDICT word: detail` line by `meaning`."""
    exe = src.with_suffix("")
    rc, log = _run(["nvcc", f"-arch={arch}", "-o", str(exe), str(src)], timeout=300)
    if rc == 0:
        rc, log = _run([str(exe)], timeout=120)
    m = re.search(r"VERDICT (\w+): (.*)", log)
    if m is None:
        return f"UNCHECKED (no verdict; exit {rc}: {log[-300:]})"
    status = meaning.get(m.group(1))
    return f"{status} ({detail_prefix}{m.group(2)})" if status else f"UNCHECKED ({m.group(2)})"


def check_ptx(case: Case, workdir: Path, arch: str, numeric: bool) -> dict[Expectation, str]:
    """Float-to-double promotion in the kernel's PTX; files with a numeric check (low-precision
    accumulators, lossy atomics: no PTX signature) are left to it. Independent of the analyses'
    findings, so that a held-out corpus is confirmed on its own terms."""
    if numeric:
        return {e: "UNCHECKED (no PTX signature; the numeric check runs it on a GPU)"
                for e in case.expected if e.category == "precision"}
    ptx = workdir / f"{case.path.stem}.ptx"
    rc, log = _run(["nvcc", f"-arch={arch}", "-ptx", "-o", str(ptx), str(case.path)], timeout=300)
    if rc != 0:
        return {e: f"UNCHECKED (PTX compile failed: {log[-300:]})" for e in case.expected}
    text = ptx.read_text()
    m = re.search(rf"\.entry\s+\w*{re.escape(case.kernel.name)}\w*\((.*?)\n}}", text, re.S)
    body = m.group(0) if m else text
    # a float promoted to double; sinf/cosf's own slow path uses f64 arithmetic on integers only
    doubles = re.findall(r"\bcvt(?:\.\w+)*\.f64\.f32\b", body)
    out = {}
    for e in case.expected:
        if e.category == "precision":
            out[e] = (f"CONFIRMED ({len(doubles)} float-to-double conversions in the kernel's PTX)"
                      if doubles else "NOT SEEN (no float-to-double conversion in the kernel's PTX)")
    return out


def check_numeric(case: Case, workdir: Path, arch: str,
                  checks: dict[str, precision_numeric.Check]) -> dict[Expectation, str]:
    """Precision expectations without a PTX signature, by running the kernel and its fixed twin."""
    check = checks.get(case.path.name)
    if check is None:
        return {}
    src = workdir / f"{case.path.stem}_numeric.cu"
    src.write_text(precision_numeric.host_program(str(case.path.resolve()), check))
    verdict = _program_verdict(src, arch, {"lossy": "CONFIRMED", "accurate": "NOT SEEN"})
    return {e: verdict for e in case.expected if e.category == "precision"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="annotated corpus folder")
    parser.add_argument("--only", default="race,sync,coalescing,bank-conflict,precision,overflow")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--keep", type=Path, help="keep generated sources and binaries here")
    parser.add_argument("--ptx-only", action="store_true", help="only the precision check (no GPU)")
    args = parser.parse_args(argv)
    only = {"precision"} if args.ptx_only else set(args.only.split(","))
    if shutil.which("nvcc") is None:
        print("nvcc not found")
        return 2
    if not args.corpus.is_dir():
        print(f"confirm: {args.corpus} is not a directory")
        return 2
    launches, checks = hand_written(args.corpus)
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="dice-confirm-"))
    workdir.mkdir(parents=True, exist_ok=True)
    tally: Counter[tuple[str, str]] = Counter()
    todo = cases(only, args.corpus)
    gpu_cases = [c for c in todo if any(e.category in GPU_CATEGORIES for e in c.expected)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:   # nvcc runs dominate otherwise
        built = pool.map(lambda c: build(c, workdir, args.arch), gpu_cases)
        exes = dict(zip((id(c) for c in gpu_cases), built))
    for case in todo:
        print(f"{case.path.name} :: {case.kernel.name}")
        results: dict[Expectation, str] = {}
        if any(e.category == "precision" for e in case.expected):
            results |= check_ptx(case, workdir, args.arch, case.path.name in checks)
            if not args.ptx_only:
                results |= check_numeric(case, workdir, args.arch, checks)
        if any(e.category == "overflow" for e in case.expected):
            results |= check_overflow(case, workdir, args.arch, launches)
        exe = exes.get(id(case))
        if exe is not None:
            if any(e.category == "race" for e in case.expected):
                results |= check_sanitizer(case, exe, "racecheck", "race")
            if any(e.category == "sync" for e in case.expected):
                results |= check_sanitizer(case, exe, "synccheck", "sync")
            if any(e.category in ("coalescing", "bank-conflict") for e in case.expected):
                results |= check_ncu(case, exe)
        for e in case.expected:
            verdict = results.get(e, "UNCHECKED (no dynamic check for this category)")
            tally[(e.category, verdict.split()[0])] += 1
            print(f"  line {e.line + 1:>4} {e.category:<14} {verdict}")
    print("\nsummary:")
    for cat in sorted({c for c, _ in tally}):
        counts = {v: n for (c, v), n in tally.items() if c == cat}
        print(f"  {cat:<14} " + ", ".join(f"{v.lower()}: {n}" for v, n in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
