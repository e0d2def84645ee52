"""Structured messages from nvcc's front end (EDG), the host preprocessor (gcc/clang style),
ptxas, nvlink and the nvcc driver itself.

Lines and columns are 1-based as compilers print them; 0 means unknown. Messages about the
temporary file the wrapper compiled are reported under the caller's file name.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import PurePath
from typing import Any

from .resources import kernel_base_name


@dataclass(frozen=True)
class CompileMessage:
    file: str
    line: int                 # 1-based; 0 when the tool gave none
    column: int               # 1-based; 0 when unknown
    severity: str             # "error" | "warning"
    message: str
    code: str = ""            # EDG diagnostic number such as "177-D", when given

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_EDG = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<sev>catastrophic error|fatal error|error|warning)"
                  r"(?: #(?P<code>[\w-]+))?: (?P<msg>.*)$")
_GCC = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): (?P<sev>fatal error|error|warning): "
                  r"(?P<msg>.*)$")
_TOOL = re.compile(r"^(?P<tool>ptxas|nvlink|nvcc)(?: (?P<file>[^,]+), line (?P<line>\d+);)?\s*"
                   r"(?P<sev>fatal|error|warning)\s*: (?P<msg>.*)$")
_CARET = re.compile(r"^\s*\^\s*$")
_MANGLED = re.compile(r"'(_Z\w+)'")
_ECHO_INDENT = 2   # EDG echoes the offending source line indented by two spaces


def _severity(word: str) -> str:
    return "warning" if word == "warning" else "error"


class _Context:
    def __init__(self, temp_name: str, filename: str, source: str):
        self.temp_name = temp_name
        self.filename = filename
        self.lines = source.splitlines()
        self.source = source

    def file(self, path: str) -> str:
        return self.filename if PurePath(path).name == self.temp_name else path

    def source_line(self, file: str, line: int) -> str | None:
        if file == self.filename and 1 <= line <= len(self.lines):
            return self.lines[line - 1].replace("\t", " ")
        return None

    def kernel_line(self, symbol: str) -> int:
        """The 1-based line defining kernel `symbol` in the caller's source, 0 if not found."""
        name = kernel_base_name(symbol)
        for m in re.finditer(rf"\b{re.escape(name)}\s*[(<]", self.source):
            before = self.source[max(0, m.start() - 300):m.start()]
            tail = re.split(r"[;}]", before)[-1]
            if "__global__" in tail:
                return self.source.count("\n", 0, m.start()) + 1
        return 0


def _edg_column(echo: str, caret: str, source_line: str | None) -> int:
    """1-based column of the caret. EDG echoes the line after macro-like rewriting (for example
    `__global__` becomes `__attribute__((global))`), so the caret is aligned on the text from
    the caret to the end of the line when the echo differs from the source."""
    col = caret.index("^")
    if source_line is None:
        return max(col - _ECHO_INDENT, 0) + 1
    echoed = echo[_ECHO_INDENT:].rstrip()
    src = source_line.rstrip()
    if echoed == src:
        return col - _ECHO_INDENT + 1
    suffix = echo[col:].rstrip()
    if suffix and src.endswith(suffix):
        return len(src) - len(suffix) + 1
    return min(max(col - _ECHO_INDENT, 0), len(src)) + 1


def parse_messages(log: str, *, temp_name: str, filename: str, source: str) -> list[CompileMessage]:
    ctx = _Context(temp_name, filename, source)
    lines = log.splitlines()
    out: list[CompileMessage] = []
    i = 0
    while i < len(lines):
        text = lines[i]
        if m := _EDG.match(text):
            block: list[str] = []
            j = i + 1
            while j < len(lines) and lines[j].strip() and not _EDG.match(lines[j]):
                block.append(lines[j])
                j += 1
            file = ctx.file(m.group("file"))
            line = int(m.group("line"))
            column = 0
            details: list[str] = []
            caret_at = next((k for k, b in enumerate(block) if _CARET.match(b)), None)
            for k, b in enumerate(block):
                if caret_at is not None and k in (caret_at - 1, caret_at):
                    continue
                details.append(b.strip())
            if caret_at is not None and caret_at > 0:
                column = _edg_column(block[caret_at - 1], block[caret_at], ctx.source_line(file, line))
            message = "\n".join([m.group("msg"), *details])
            out.append(CompileMessage(file, line, column, _severity(m.group("sev")), message,
                                      m.group("code") or ""))
            i = j
            continue
        if m := _GCC.match(text):
            out.append(CompileMessage(ctx.file(m.group("file")), int(m.group("line")), int(m.group("col")),
                                      _severity(m.group("sev")), m.group("msg")))
        elif m := _TOOL.match(text):
            msg = m.group("msg")
            line = 0
            if m.group("line"):      # a PTX line (inline asm): not a line of the caller's file
                msg = f"{msg} (PTX line {m.group('line')})"
            elif sym := _MANGLED.search(msg):
                line = ctx.kernel_line(sym.group(1))
                msg = msg.replace(sym.group(0), f"'{kernel_base_name(sym.group(1))}'")
            out.append(CompileMessage(filename, line, 0, _severity(m.group("sev")),
                                      f"{m.group('tool')}: {msg}"))
        i += 1
    return out
