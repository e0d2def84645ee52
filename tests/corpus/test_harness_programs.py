"""The host programs the GPU confirmation harness generates must compile (real nvcc, no GPU):
the numeric precision checks and the past-2^31 overflow launches, for the project corpus and the
held-out one (tests/corpus_wild), and the generic launch programs of the held-out corpus. Running
them needs the H200 (`tests/corpus/harness/confirm.py [--corpus tests/corpus_wild]`, results in
benchmarks/CORPUS_CONFIRM_H200.md and benchmarks/CORPUS_WILD.md)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).parent / "harness"
sys.path.insert(0, str(HARNESS))

import confirm  # noqa: E402
import overflow_launch  # noqa: E402
import precision_numeric  # noqa: E402
import wild_cases  # noqa: E402
from dice_engine.analysis.syntax import functions, new_parser  # noqa: E402
from eval_corpus import expectations  # noqa: E402

HELD_OUT = Path(__file__).parent.parent / "corpus_wild"
NUMERIC = ([(Path(__file__).parent / n, c) for n, c in sorted(precision_numeric.CHECKS.items())]
           + [(HELD_OUT / n, c) for n, c in sorted(wild_cases.CHECKS.items())])
OVERFLOW = ([(Path(__file__).parent / n, x) for n, x in sorted(overflow_launch.LAUNCHES.items())]
            + [(HELD_OUT / n, x) for n, x in sorted(wild_cases.LAUNCHES.items())])


def _id(case: tuple) -> str:
    return f"{case[0].parent.name}/{case[0].name}"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")]


def _kernel_name(path: Path) -> str:
    root = new_parser().parse(path.read_bytes()).root_node
    return next(f.name for f in functions(root) if f.is_kernel)


def _compiles(source: str, tmp_path: Path) -> None:
    src = tmp_path / "program.cu"
    src.write_text(source)
    run = subprocess.run(["nvcc", "-arch=sm_90", "-c", "-o", str(tmp_path / "program.o"), str(src)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]


@pytest.mark.parametrize("case", NUMERIC, ids=[_id(c) for c in NUMERIC])
def test_numeric_precision_program_compiles(case: tuple, tmp_path: Path) -> None:
    corpus_file, check = case
    program = precision_numeric.host_program(str(corpus_file.resolve()), check)
    assert f"{_kernel_name(corpus_file)}<<<" in program      # the corpus kernel itself is launched
    _compiles(program, tmp_path)


@pytest.mark.parametrize("case", OVERFLOW, ids=[_id(c) for c in OVERFLOW])
def test_overflow_program_compiles(case: tuple, tmp_path: Path) -> None:
    corpus_file, launch = case
    program = overflow_launch.host_program(str(corpus_file.resolve()), _kernel_name(corpus_file), launch)
    _compiles(program, tmp_path)


HELD_OUT_GPU = confirm.cases(set(confirm.GPU_CATEGORIES), HELD_OUT)


@pytest.mark.parametrize("case", HELD_OUT_GPU, ids=[f"{c.path.name}::{c.kernel.name}" for c in HELD_OUT_GPU])
def test_held_out_launch_program_compiles(case: confirm.Case, tmp_path: Path) -> None:
    """The generic program racecheck, synccheck and ncu run: the held-out kernel at its block shape."""
    program = confirm.host_main(case)
    assert f"{case.kernel.name}<<<" in program
    _compiles(program, tmp_path)


def test_held_out_dynamic_checks_cover_every_overflow_and_accumulator_file(tmp_path: Path) -> None:
    """Overflow files need a hand-written launch; precision files without a numeric check must
    show the promotion they are annotated with in their PTX (the harness's check, run here)."""
    missing, no_promotion = [], []
    for path in sorted(HELD_OUT.glob("*.cu")):
        cats = {e.category for e in expectations(path)[0]}
        if "overflow" in cats and path.name not in wild_cases.LAUNCHES:
            missing.append(path.name)
        if "precision" in cats and path.name not in wild_cases.CHECKS:
            for case in confirm.cases({"precision"}, HELD_OUT):
                if case.path == path:
                    verdicts = confirm.check_ptx(case, tmp_path, "sm_90", numeric=False)
                    no_promotion += [f"{path.name}: {v}" for v in verdicts.values()
                                     if not v.startswith("CONFIRMED")]
    assert not missing and not no_promotion, (missing, no_promotion)


def test_every_unsigned_precision_expectation_has_a_numeric_check() -> None:
    """Precision files whose findings have no PTX signature (not P001/P002/P005, which promote
    float to double) need a numeric check."""
    from dice_engine.analysis import check_source
    missing = []
    for path in sorted(Path(__file__).parent.glob("prec_*.cu")):
        codes = {f.code for f in check_source(path.read_text(), path.name)}
        if not codes & {"DICE-P001", "DICE-P002", "DICE-P005"} and path.name not in precision_numeric.CHECKS:
            missing.append(path.name)
    assert not missing
