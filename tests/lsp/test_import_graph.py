"""The modules of server/dice_lsp import each other without a cycle: every import counts,
at module level, inside functions and under `if TYPE_CHECKING:` alike."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "dice_lsp"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that `path` imports (a name imported from a package that is one of
    its submodules counts as that submodule)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {m for m in found if m in modules and m != name}


def graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    # Package __init__ modules hold no code: an edge through one is not a dependency.
    packages = {module_name(p) for p in paths if p.name == "__init__.py"}
    assert all(not ast.parse(p.read_text()).body[1:] for p in paths if p.name == "__init__.py")
    return {module_name(p): imports_of(p, modules) - packages for p in paths}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}       # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_checker_finds_a_cycle_through_relative_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "dice_lsp"
    (pkg / "features").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""x"""\n')
    (pkg / "features" / "__init__.py").write_text('"""x"""\n')
    (pkg / "server.py").write_text("def make():\n    from .features import a\n")
    (pkg / "features" / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                           "    from ..server import make\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    assert find_cycle(graph()) in (["dice_lsp.features.a", "dice_lsp.server", "dice_lsp.features.a"],
                                   ["dice_lsp.server", "dice_lsp.features.a", "dice_lsp.server"])


def test_dice_lsp_has_no_import_cycle():
    edges = graph()
    assert len(edges) > 20 and edges["dice_lsp.app"] >= {"dice_lsp.features.generate", "dice_lsp.server"}
    assert find_cycle(edges) is None, " -> ".join(find_cycle(edges) or [])


def test_features_do_not_import_each_other():
    edges = graph()
    features = {m for m in edges if m.startswith("dice_lsp.features.")}
    borrowed = {(m, d) for m in features for d in edges[m] & features}
    # What remains is one way only: code actions offer the generate command by its name; the
    # settings and save features re-run diagnostics; intent findings are diagnostics' own.
    assert borrowed <= {("dice_lsp.features.code_actions", "dice_lsp.features.generate"),
                        ("dice_lsp.features.settings", "dice_lsp.features.diagnostics"),
                        ("dice_lsp.features.on_save", "dice_lsp.features.diagnostics"),
                        ("dice_lsp.features.on_save", "dice_lsp.features.intents"),
                        ("dice_lsp.features.diagnostics", "dice_lsp.features.intents")}, borrowed
