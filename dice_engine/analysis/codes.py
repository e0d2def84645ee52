"""The stable diagnostic codes, all of them in one table: static analysis, compiler and
resources, intents (the editor) and dynamic findings (compute-sanitizer, Nsight Compute).
Each has its category, default severity, title and documentation page.

Codes never change meaning; a retired code stays in the table. Each has a page under
docs/codes/<CODE>.md (a test checks that every page exists and that every code the sources
use is here).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CodeInfo:
    category: str
    severity: str
    title: str
    origin: str          # static (a rule of registry.RULES), compiler, editor, sanitizer or profiler

    def doc_path(self, code: str) -> str:
        return f"docs/codes/{code}.md"


CODES: dict[str, CodeInfo] = {
    # sync
    "DICE-S001": CodeInfo("sync", "error", "Barrier under a thread-dependent condition", "static"),
    "DICE-S002": CodeInfo("sync", "error", "Barrier after a thread-dependent early exit", "static"),
    "DICE-S003": CodeInfo("sync", "error", "Barrier in a loop with a thread-dependent trip count", "static"),
    "DICE-S004": CodeInfo("sync", "error", "Warp-synchronous mask does not match the participating lanes",
                          "static"),
    # race
    "DICE-R001": CodeInfo("race", "error", "Shared-memory read of another thread's write without a barrier",
                          "static"),
    "DICE-R002": CodeInfo("race", "error", "Shared memory overwritten before other threads read it",
                          "static"),
    "DICE-R003": CodeInfo("race", "error", "Several threads write the same shared-memory element", "static"),
    "DICE-R004": CodeInfo("race", "error", "Reduction tree step without a barrier", "static"),
    # coalescing
    "DICE-C001": CodeInfo("coalescing", "warning", "Strided global-memory access", "static"),
    "DICE-C002": CodeInfo("coalescing", "warning", "Array-of-structs field access", "static"),
    "DICE-C003": CodeInfo("coalescing", "warning", "threadIdx.x is not the fastest-varying index", "static"),
    # bank-conflict
    "DICE-B001": CodeInfo("bank-conflict", "warning", "Shared-memory bank conflict", "static"),
    # precision
    "DICE-P001": CodeInfo("precision", "warning", "Double-precision literal in float arithmetic", "static"),
    "DICE-P002": CodeInfo("precision", "warning", "Math call resolves to the double-precision overload",
                          "static"),
    "DICE-P003": CodeInfo("precision", "warning", "Half/bfloat16 accumulator in a loop", "static"),
    "DICE-P004": CodeInfo("precision", "warning", "Lossy atomicAdd target", "static"),
    "DICE-P005": CodeInfo("precision", "warning", "Float accumulator of double values in a loop", "static"),
    "DICE-P006": CodeInfo("precision", "warning", "One float total built by more than 2^24 atomicAdds",
                          "static"),
    "DICE-P007": CodeInfo("precision", "warning", "One float sum of more than 2^24 serial terms",
                          "static"),
    # overflow
    "DICE-O001": CodeInfo("overflow", "warning", "32-bit index for an extent that can exceed 2^31", "static"),
    "DICE-O002": CodeInfo("overflow", "warning", "Index product computed in 32 bits before widening",
                          "static"),
    # bounds
    "DICE-X001": CodeInfo("bounds", "warning",
                          "Thread index used without a bounds check on a rounded-up grid", "static"),
    "DICE-X002": CodeInfo("bounds", "warning", "Loop bound past the end of the array it indexes",
                          "static"),
    # resources (ptxas)
    "DICE-M001": CodeInfo("resources", "warning", "Register spills to local memory", "compiler"),
    "DICE-M002": CodeInfo("resources", "information", "Stack frame in local memory", "compiler"),
    "DICE-M003": CodeInfo("resources", "information", "Occupancy limited by registers", "compiler"),
    "DICE-M004": CodeInfo("resources", "information", "Occupancy limited by shared memory", "compiler"),
    "DICE-M005": CodeInfo("resources", "information", "Occupancy limited by block size", "compiler"),
    "DICE-M006": CodeInfo("resources", "error", "Kernel cannot launch: resources exceed the per-block limit",
                          "compiler"),
    "DICE-M007": CodeInfo("resources", "error",
                          "Dynamic shared memory above the default limit without opting in", "static"),
    "DICE-M008": CodeInfo("resources", "error", "Block larger than any GPU launches", "static"),
    # compile
    "DICE-E001": CodeInfo("compile", "error", "nvcc error", "compiler"),
    "DICE-E002": CodeInfo("compile", "warning", "nvcc warning", "compiler"),
    "DICE-E003": CodeInfo("compile", "warning", "nvcc not found", "compiler"),
    # intent (the editor's findings on `// @dice:` intents and their regions)
    "DICE-I001": CodeInfo("intent", "error", "Intent cannot be served", "editor"),
    "DICE-I002": CodeInfo("intent", "information", "Generated region is stale", "editor"),
    "DICE-I003": CodeInfo("intent", "warning", "Malformed or orphan region marker", "editor"),
    "DICE-I004": CodeInfo("intent", "warning", "Stale region edited by hand was not regenerated", "editor"),
    "DICE-I005": CodeInfo("intent", "warning", "Kernel written by a model was not verified on a GPU",
                          "editor"),
    "DICE-I006": CodeInfo("intent", "warning", "Intent comment after code on its line is not read", "editor"),
    # dynamic: compute-sanitizer
    "DICE-D001": CodeInfo("overflow", "error", "Out-of-bounds or misaligned memory access (memcheck)",
                          "sanitizer"),
    "DICE-D002": CodeInfo("race", "error", "Data race hazard (racecheck)", "sanitizer"),
    "DICE-D003": CodeInfo("sync", "error", "Barrier error (synccheck)", "sanitizer"),
    "DICE-D004": CodeInfo("race", "warning", "Read of device memory nothing wrote (initcheck)", "sanitizer"),
    "DICE-D005": CodeInfo("race", "information", "Racecheck skipped: the grid is too large", "sanitizer"),
    # the analysis itself (the editor's notes on what it could not do)
    "DICE-A001": CodeInfo("performance", "information",
                          "Static analysis skipped: the input is over its budget", "editor"),
    "DICE-A002": CodeInfo("performance", "warning", "Part of the static analysis failed", "editor"),
    # dynamic: Nsight Compute
    "DICE-D010": CodeInfo("coalescing", "warning", "Measured uncoalesced global access", "profiler"),
    "DICE-D011": CodeInfo("bank-conflict", "warning", "Measured shared-memory bank conflicts", "profiler"),
    "DICE-D012": CodeInfo("performance", "information", "Measured kernel throughput and occupancy",
                          "profiler"),
}


def categories(origin: str | None = None) -> tuple[str, ...]:
    """The categories of the table's codes (of one origin), in table order."""
    return tuple(dict.fromkeys(info.category for info in CODES.values()
                               if origin is None or info.origin == origin))


STATIC_CATEGORIES = categories("static")      # the categories the static rules report
