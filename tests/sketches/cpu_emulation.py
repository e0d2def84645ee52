"""Run a rendered kernel on the CPU (cuda_emu.h + g++) and compare it with the reference
evaluator: numerical checks of the sketches' index math, bounds, tails and barriers without a
GPU. Only small problems: every CUDA thread is an OS thread."""
from __future__ import annotations

import functools
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from dice_engine.arch import ARCHS
from dice_engine.compile import NvccNotFound, find_nvcc
from dice_engine.ir import reference
from dice_engine.ir.dtypes import DType
from dice_engine.ir.patterns import Problem
from dice_engine.sketches.base import Point, RenderedKernel, Sketch

HERE = Path(__file__).parent
TOLERANCE = {"f64": 1e-9, "f32": 1e-4, "f16": 1e-2, "bf16": 2e-2}   # relative to 1 + |expected|


@functools.lru_cache(maxsize=1)
def cuda_include_dir() -> str | None:
    """The toolkit's include directory, as nvcc itself reports it."""
    try:
        nvcc = find_nvcc()
    except NvccNotFound:
        return None
    out = subprocess.run([nvcc, "--dryrun", "-E", "-x", "cu", "/dev/null"], capture_output=True, text=True)
    match = re.search(r'INCLUDES="-I([^"]+?)"', out.stderr + out.stdout)
    return match.group(1).strip() if match else None


needs_emulator = pytest.mark.skipif(shutil.which("g++") is None or cuda_include_dir() is None,
                                    reason="the CPU emulation needs g++ and the CUDA headers")


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    return parts + [current.strip()]


def host_source(rendered: RenderedKernel) -> str:
    """The region with its includes swapped for the emulator and `k<<<g, b, ...>>>(args);`
    launches turned into emulated ones."""
    def launch(m: re.Match) -> str:
        grid, block = _split_top_level(m.group(2))[:2]
        return f"emu::launch(dim3({grid}), dim3({block}), [&] {{ {m.group(1)}({m.group(3)}); }});"
    body = "\n".join(line for line in rendered.source.splitlines() if not line.startswith("#include"))
    return '#include "cuda_emu.h"\n' + re.sub(r"([\w:]+)<<<(.+?)>>>\((.*?)\);", launch, body)


def _storage(dtype: DType) -> np.dtype:
    return np.dtype({"bf16": np.uint16, "bool": np.uint8}.get(dtype.name, dtype.numpy))


def _bind(shape: tuple, symbols: dict[str, int]) -> tuple[int, ...]:
    return tuple(symbols[d] if isinstance(d, str) else d for d in shape)


def random_inputs(problem: Problem, symbols: dict[str, int], seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    inputs = {}
    for name, decl in problem.program.inputs.items():
        shape = _bind(decl.shape, symbols)
        if decl.dtype.is_float:
            inputs[name] = reference.round_to(rng.standard_normal(shape), decl.dtype)
        else:
            low, high = {"i32": (-50, 50), "i64": (-50, 50), "bool": (0, 2)}.get(decl.dtype.name, (0, 50))
            inputs[name] = rng.integers(low, high, shape).astype(decl.dtype.numpy)
    return inputs


def run_on_cpu(rendered: RenderedKernel, problem: Problem, inputs: dict[str, np.ndarray],
               symbols: dict[str, int], workdir: Path) -> np.ndarray:
    program = problem.program
    main = [host_source(rendered), "#include <fstream>", "",
            "static void* load(const char* path, size_t bytes) {",
            "    void* buffer = std::calloc(bytes + 64, 1);",
            "    std::ifstream(path, std::ios::binary).read(static_cast<char*>(buffer), bytes);",
            "    return buffer;", "}", "", "int main() {"]
    args = []
    for name, decl in program.inputs.items():
        raw = reference.to_storage(inputs[name], decl.dtype)
        raw.tofile(workdir / f"{name}.bin")
        main.append(f"    auto* {name}_in = static_cast<{decl.dtype.c_type}*>("
                    f'load("{workdir}/{name}.bin", {raw.nbytes}));')
        args.append(f"{name}_in")
    out_dtype = program.output.dtype
    out_shape = _bind(program.output.shape, symbols)
    out_bytes = int(np.prod(out_shape)) * _storage(out_dtype).itemsize
    main.append(f"    auto* result = static_cast<{out_dtype.c_type}*>(std::calloc({out_bytes} + 64, 1));")
    args += ["result", *(f"{symbols[s]}LL" for s in program.symbol_names()), "nullptr"]
    launcher = rendered.launcher.split("_launch(")[0].split()[-1] + "_launch"
    main += [f"    {launcher}({', '.join(args)});",
             f'    std::ofstream("{workdir}/out.bin", std::ios::binary)'
             f".write(reinterpret_cast<const char*>(result), {out_bytes});", "}"]
    (workdir / "main.cpp").write_text("\n".join(main) + "\n")
    # UBSan alignment checks stand in for the GPU faulting on a misaligned vector access.
    command = ["g++", "-std=c++20", "-O1", "-pthread", "-w", "-fsanitize=alignment",
               "-fno-sanitize-recover=all", f"-I{HERE}", f"-I{cuda_include_dir()}", "main.cpp", "-o", "main"]
    build = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run(["./main"], cwd=workdir, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    raw = np.fromfile(workdir / "out.bin", dtype=_storage(out_dtype)).reshape(out_shape)
    return reference.from_storage(raw, out_dtype)


def assert_matches_reference(sketch: Sketch, problem: Problem, point: Point, workdir: Path,
                             symbols: dict[str, int] | None = None,
                             inputs: dict[str, np.ndarray] | None = None) -> None:
    """Render `point`, run it on the CPU emulator and compare with the reference evaluator
    (on `inputs`, or on standard normal draws)."""
    bound = {s: (symbols or {}).get(s) or problem.program.symbols[s] for s in problem.program.symbol_names()}
    rendered = sketch.render(problem, ARCHS["sm_90"], point, "emulated")
    inputs = random_inputs(problem, bound) if inputs is None else inputs
    got = run_on_cpu(rendered, problem, inputs, bound, workdir).astype(np.float64)
    want = reference.evaluate(problem.program, inputs, bound).astype(np.float64)
    error = np.abs(got - want) / (1 + np.abs(want))
    tolerance = TOLERANCE.get(problem.program.output.dtype.name, 0.0)
    bad = np.argwhere(~(error <= tolerance))
    assert len(bad) == 0, (f"{sketch.name} {point}: {len(bad)} wrong elements, first at {bad[0].tolist()}: "
                           f"got {got[tuple(bad[0])]}, want {want[tuple(bad[0])]}")
