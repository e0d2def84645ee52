"""Per-kernel resource usage from ptxas's verbose output (`-Xptxas -v`)."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class KernelResources:
    registers: int
    spill_store_bytes: int
    spill_load_bytes: int
    smem_bytes: int          # static shared memory; dynamic shared memory is the launch's business
    stack_bytes: int
    barriers: int
    symbol: str = ""         # the mangled entry name, for when two instantiations share a base name

    @property
    def spill_bytes(self) -> int:
        return self.spill_store_bytes + self.spill_load_bytes

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def kernel_base_name(symbol: str) -> str:
    """The unqualified name of a kernel from its (Itanium-mangled) symbol, without namespaces,
    template arguments or parameters: `_ZN6dice_x18softmax_f32_kernelEPKfPfi` → `softmax_f32_kernel`.
    extern "C" kernels are not mangled and come back unchanged.

    Only the name part is decoded: kernels are namespace-scope functions, so their name is the
    last <source-name> before the template arguments or the end of the nested name."""
    if not symbol.startswith("_Z"):
        return symbol
    s, i = symbol[2:], 0
    if s.startswith("L"):                 # internal linkage
        i += 1
    nested = s[i:i + 1] == "N"
    if nested:
        i += 1
        while i < len(s) and s[i] in "rVK":
            i += 1
    last = ""
    while i < len(s):
        if s[i].isdigit():
            m = re.match(r"\d+", s[i:])
            assert m is not None
            length = int(m.group())
            start = i + len(m.group())
            last = s[start:start + length]
            i = start + length
            if not nested:
                break
        elif s.startswith("St", i):
            i += 2
        elif s[i] == "S":                 # a substitution S<seq-id>_
            end = s.find("_", i)
            if end < 0:
                break
            i = end + 1
        else:                             # 'I' (template args) or 'E' (end of the nested name)
            break
    return last or symbol


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_resources(log: str) -> dict[str, KernelResources]:
    """Resources per kernel base name. When two entries share a base name (two template
    instantiations), the one using more registers is kept: it bounds occupancy for both."""
    frames: dict[str, tuple[int, int, int]] = {}
    out: dict[str, KernelResources] = {}
    entry: str | None = None
    props_for: str | None = None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            entry, props_for = m.group(1), None
        elif m := _PROPS.search(line):
            props_for = m.group(1)
        elif (m := _FRAME.search(line)) and props_for:
            frames[props_for] = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif (m := _USED.search(line)) and entry:
            stack, stores, loads = frames.get(entry, (0, 0, 0))
            b = _BARRIERS.search(line)
            s = _SMEM.search(line)
            res = KernelResources(registers=int(m.group(1)), spill_store_bytes=stores, spill_load_bytes=loads,
                                  smem_bytes=int(s.group(1)) if s else 0, stack_bytes=stack,
                                  barriers=int(b.group(1)) if b else 0, symbol=entry)
            base = kernel_base_name(entry)
            if base not in out or out[base].registers < res.registers:
                out[base] = res
            entry = None
    return out
