"""The host programs the GPU confirmation harness generates must compile (real nvcc, no GPU):
the numeric precision checks and the past-2^31 overflow launches. Running them needs the H200
(`tests/corpus/harness/confirm.py`, results in benchmarks/CORPUS_CONFIRM_H200.md)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).parent / "harness"
sys.path.insert(0, str(HARNESS))

import overflow_launch  # noqa: E402
import precision_numeric  # noqa: E402
from dice_engine.analysis.syntax import functions, new_parser  # noqa: E402

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


@pytest.mark.parametrize("name", sorted(precision_numeric.CHECKS))
def test_numeric_precision_program_compiles(name: str, tmp_path: Path) -> None:
    corpus_file = Path(__file__).parent / name
    program = precision_numeric.host_program(str(corpus_file.resolve()), precision_numeric.CHECKS[name])
    assert f"{_kernel_name(corpus_file)}<<<" in program      # the corpus kernel itself is launched
    _compiles(program, tmp_path)


@pytest.mark.parametrize("name", sorted(overflow_launch.LAUNCHES))
def test_overflow_program_compiles(name: str, tmp_path: Path) -> None:
    corpus_file = Path(__file__).parent / name
    program = overflow_launch.host_program(str(corpus_file.resolve()), _kernel_name(corpus_file),
                                           overflow_launch.LAUNCHES[name])
    _compiles(program, tmp_path)


def test_every_unsigned_precision_expectation_has_a_numeric_check() -> None:
    """Precision files whose findings have no PTX signature (not P001/P002) need a numeric check."""
    from dice_engine.analysis import check_source
    missing = []
    for path in sorted(Path(__file__).parent.glob("prec_*.cu")):
        codes = {f.code for f in check_source(path.read_text(), path.name)}
        if not codes & {"DICE-P001", "DICE-P002"} and path.name not in precision_numeric.CHECKS:
            missing.append(path.name)
    assert not missing
