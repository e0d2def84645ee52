"""DICE's diagnostics for any CUDA file: static analyses on tree-sitter-cuda trees (sync, race,
coalescing, bank-conflict, precision, overflow, bounds), compiler findings (compile, resources), and the
merge with sanitizer/profiler findings."""
from .analyzer import Analyzer, check_source
from .compiler import compiler_findings
from .findings import Finding, Fix, TextEdit
from .merge import merge

__all__ = ["Analyzer", "Finding", "Fix", "TextEdit", "check_source", "compiler_findings", "merge"]
