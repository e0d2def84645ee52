"""The runner sits below the benchmark: no runner module imports `dice_engine.bench`."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import dice_engine.runner

RUNNER = Path(dice_engine.runner.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    """Absolute names of the modules a runner file imports (relative imports resolved)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = "dice_engine.runner".split(".")[: 2 - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names |= {module} | {f"{module}.{alias.name}" for alias in node.names}
    return names


def test_no_runner_module_imports_the_bench():
    files = sorted(RUNNER.glob("*.py"))
    assert len(files) > 10
    offenders = {f.name: sorted(m for m in _imported_modules(f) if m.startswith("dice_engine.bench"))
                 for f in files}
    assert {f: m for f, m in offenders.items() if m} == {}


def test_the_resolution_sees_upward_imports():
    # the checker itself: bench/suite.py imports the runner, and is seen to
    names = _imported_modules(RUNNER.parent / "bench" / "suite.py")
    assert any(n.startswith("dice_engine.runner") for n in names)


def test_importing_every_runner_module_loads_no_bench_module():
    modules = [f"dice_engine.runner.{f.stem}" for f in sorted(RUNNER.glob("*.py")) if f.stem != "__init__"]
    code = ("import importlib, sys\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            "print(sorted(m for m in sys.modules if m.startswith('dice_engine.bench')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         check=True)
    assert out.stdout.strip() == "[]"
