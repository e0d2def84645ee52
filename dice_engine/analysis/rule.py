"""What a diagnostics rule is and what it is given: one `Context` per function, the same for
every rule, and the `Rule` record that `registry.RULES` lists."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from tree_sitter import Node

from .findings import Finding
from .syntax import NO_LAUNCH, FileFacts, Function, LaunchFacts, Source
from .trace import Trace
from .types import Typer


@dataclass
class Context:
    """One function as every rule sees it. `trace` is the SIMT run over its modeled block, set
    only for the functions that are analyzed per thread (kernels, and device functions no
    kernel calls) and only for rules that ask for it."""
    src: Source
    fn: Function
    facts: FileFacts
    found: dict[str, list[Node]]            # `syntax.captures` of the body
    launch: LaunchFacts = NO_LAUNCH
    trace: Trace | None = None

    @cached_property
    def constants(self) -> dict[str, int]:
        """The file's integer constants, with the constant values its launch sites pass to this
        function's integer parameters."""
        if not self.launch.values:
            return self.facts.constants
        return {**self.facts.constants, **dict(self.launch.values)}

    @cached_property
    def typer(self) -> Typer:
        return Typer(self.fn, self.facts, self.found.get("decl", []))


@dataclass(frozen=True)
class Rule:
    """One analysis: the codes it may report (rows of `codes.CODES`), whether it reads the SIMT
    trace, and the check itself."""
    name: str
    codes: tuple[str, ...]
    check: Callable[[Context], list[Finding]]
    needs_trace: bool = False
