"""Compiler findings: nvcc/ptxas errors and warnings mapped to source ranges (`compile`), and
ptxas resource usage turned into `resources` findings: spills, stack frames, and occupancy
limited by registers, shared memory or block size for the target architecture. The block size
comes from a literal launch site in the file or `__launch_bounds__`; without one, occupancy is
not judged."""
from __future__ import annotations

import re
from collections.abc import Sequence

from tree_sitter import Node

from ..arch.occupancy import occupancy
from ..compile import CompileMessage, CompileResult, KernelResources, NvccNotFound, compile_cuda
from .codes import CODES
from .findings import Finding
from .syntax import FIELD, Function, Source, encode, file_facts, functions, new_parser, text, walk

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\S")
LOW_OCCUPANCY = 0.5
_LIMITER_CODES = {"registers": "DICE-M003", "shared memory": "DICE-M004", "block size": "DICE-M005"}


def compiler_findings(text_: str, path: str = "<buffer>", arch: str = "sm_90", *,
                      nvcc: str | None = None, flags: Sequence[str] = (),
                      include_paths: Sequence[str] = ()) -> list[Finding]:
    # generated wgmma regions need the arch-specific target
    target = "sm_90a" if arch == "sm_90" and "wgmma." in text_ else arch
    try:
        result = compile_cuda(text_, target, output="cubin", flags=flags, include_paths=include_paths,
                              nvcc=nvcc, filename=path)
    except NvccNotFound as exc:
        return [_make(path, (0, 0, 0, 0), "DICE-E003",
                      f"Compiler diagnostics are unavailable: {exc}")]
    return findings_from_result(text_, path, arch, result)


def findings_from_result(text_: str, path: str, arch: str, result: CompileResult) -> list[Finding]:
    data = encode(text_)
    src = Source(data, path)
    out = [_message_finding(src, m) for m in result.messages]
    tree = new_parser().parse(data)
    fns = functions(tree.root_node)
    facts = file_facts(tree.root_node, fns)
    for fn in fns:
        res = result.resources.get(fn.name)
        if fn.is_kernel and res is not None:
            block = facts.block_sizes.get(fn.name)
            threads = block[0] * block[1] * block[2] if block else \
                fn.max_threads(facts.at(fn.node.start_byte, fn.code).constants)
            out += _resource_findings(src, fn, res, arch, threads)
    return out


def _local_array(fn: Function) -> Node | None:
    """The kernel's first per-thread array declaration (`unsigned hist[256];`), not a shared or
    constant one: where a stack frame usually comes from."""
    arrays = [node for node in walk(fn.body) if node.type == "declaration" and _declares_array(node)
              and b"__shared__" not in (node.text or b"") and b"__constant__" not in (node.text or b"")]
    return min(arrays, key=lambda n: n.start_byte, default=None)


def _declares_array(declaration: Node) -> bool:
    for d in declaration.children_by_field_id(FIELD.declarator):
        if d.type == "init_declarator":
            d = d.child_by_field_id(FIELD.declarator)
        if d is not None and d.type == "array_declarator":
            return True
    return False


def _array_text(node: Node) -> str:
    return " ".join(text(node).split()).rstrip(";")[:60]


def _message_finding(src: Source, m: CompileMessage) -> Finding:
    code = "DICE-E001" if m.severity == "error" else "DICE-E002"
    label = f" [{m.code}]" if m.code else ""
    if m.line <= 0 or (m.file and m.file != src.path and not src.path.endswith(m.file)):
        where = f" (in {m.file}:{m.line})" if m.file and m.line else ""
        return _make(src.path, (0, 0, 0, 0), code, f"nvcc{label}: {m.message}{where}")
    row = m.line - 1
    line = src.lines[row].decode("utf-8", errors="replace") if row < len(src.lines) else ""
    if m.column > 0:
        start = min(m.column - 1, len(line))
        tok = _TOKEN.match(line, start)
        end = tok.end() if tok else start
    else:
        start = len(line) - len(line.lstrip())
        end = len(line.rstrip())
    return _make(src.path, (row, start, row, end), code, f"nvcc{label}: {m.message}")


def _resource_findings(src: Source, fn: Function, res: KernelResources, arch: str,
                       threads: int | None) -> list[Finding]:
    name_node = fn.node.child_by_field_name("declarator")
    while name_node is not None and name_node.type != "identifier" and name_node.named_children:
        name_node = name_node.child_by_field_name("declarator") or name_node.named_children[0]
    span = src.span(name_node if name_node is not None else fn.node)
    out: list[Finding] = []
    spill = res.spill_store_bytes + res.spill_load_bytes
    if spill:
        out.append(_make(src.path, span, "DICE-M001",
                         f"`{fn.name}` spills registers: {res.spill_store_bytes} bytes stored and "
                         f"{res.spill_load_bytes} bytes loaded from local memory per thread "
                         f"({res.registers} registers). Spills go through L1/L2 and DRAM and slow the "
                         "kernel; reduce live values (smaller tiles or unroll factors) or raise the "
                         "register limit (`__launch_bounds__`, `-maxrregcount`).",
                         {"spill_bytes": spill, "registers": res.registers}))
    elif res.stack_bytes:
        array = _local_array(fn)
        where, cause = (span, "local arrays indexed at run time, or calls that were not inlined")
        if array is not None:
            where, cause = src.span(array), f"its local array `{_array_text(array)}` is the likely cause"
        out.append(_make(src.path, where, "DICE-M002",
                         f"`{fn.name}` keeps a {res.stack_bytes}-byte stack frame in local memory "
                         f"({cause}). Index local arrays with compile-time constants (unrolled loops) "
                         "to keep them in registers, or move a large one to shared memory.",
                         {"stack_bytes": res.stack_bytes}))
    if not threads:
        return out
    occ = occupancy(arch, threads, res.registers, res.smem_bytes)
    figures = {"occupancy": occ.fraction, "limiter": occ.limiter, "threads": threads,
               "registers": res.registers, "smem_bytes": res.smem_bytes}
    if occ.blocks_per_sm == 0:
        out.append(_make(src.path, span, "DICE-M006",
                         f"`{fn.name}` cannot launch with {threads} threads per block on {arch}: "
                         f"{occ.limiter} exceed the per-block limit ({res.registers} registers/thread, "
                         f"{res.smem_bytes} bytes static shared memory). The launch fails with "
                         "`too many resources requested`.", figures))
        return out
    code = _LIMITER_CODES.get(occ.limiter)
    if code == "DICE-M003" and fn.launch_bounds_args is not None:
        code = None      # the kernel already states its register budget with __launch_bounds__
    # one-warp blocks reach exactly half the warp slots at the blocks-per-SM limit: still worth saying
    low = occ.fraction < LOW_OCCUPANCY or (code == "DICE-M005" and occ.fraction <= LOW_OCCUPANCY)
    if code is not None and low:
        advice = {"DICE-M003": f"{res.registers} registers per thread allow only "
                               f"{occ.blocks_per_sm} blocks; cap registers with `__launch_bounds__` "
                               "or reduce live values",
                  "DICE-M004": f"{res.smem_bytes} bytes of shared memory per block allow only "
                               f"{occ.blocks_per_sm} blocks; use smaller tiles",
                  "DICE-M005": f"{threads}-thread blocks hit the blocks-per-SM limit before the "
                               "warp limit; use larger blocks"}[code]
        out.append(_make(src.path, span, code,
                         f"`{fn.name}` reaches {occ.fraction:.0%} occupancy on {arch} "
                         f"({occ.warps_per_sm} warps per SM): {advice}. Fewer resident warps hide "
                         "less memory latency.", figures))
    return out


def _make(path: str, span: tuple[int, int, int, int], code: str, message: str,
          data: dict | None = None) -> Finding:
    info = CODES[code]
    l0, c0, l1, c1 = span
    return Finding(path, l0, c0, l1, c1, info.category, code, info.severity, message,
                   source="compiler", data=dict(data or {}))


__all__ = ["compiler_findings", "findings_from_result"]
