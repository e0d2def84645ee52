"""Where the kernels and launches of a document are, for hover and code lens: the engine's
tree-sitter helpers (`dice_engine.analysis.syntax`) read, positions kept in code points."""
from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Tree

from dice_engine.analysis.syntax import FileFacts, Source, encode, file_facts, functions, new_parser, text
from dice_engine.tsparse import parse_yielding

Span = tuple[int, int, int, int]   # line, column, end line, end column (0-based, code points)


@dataclass(frozen=True)
class Kernel:
    name: str                      # unqualified, as ptxas resources are keyed
    name_span: Span
    line: int                      # first line of the definition
    launch_bounds: int | None


@dataclass(frozen=True)
class Launch:
    kernel: str
    span: Span                     # the `<<<...>>>` configuration
    call_span: Span                # the whole call expression


@dataclass(frozen=True)
class Outline:
    kernels: list[Kernel]
    launches: list[Launch]
    facts: FileFacts

    def threads_per_block(self, kernel: Kernel) -> int | None:
        """Threads per block: the launch site's literal block size, else __launch_bounds__."""
        block = self.facts.block_sizes.get(kernel.name)
        if block is not None:
            return block[0] * block[1] * block[2]
        return kernel.launch_bounds

    def kernel_named(self, name: str) -> Kernel | None:
        return next((k for k in self.kernels if k.name == name), None)


EMPTY = Outline([], [], FileFacts(b""))


def outline(source_text: str, tree: Tree | None = None) -> Outline:
    """`tree`: the tree-sitter parse of `source_text` when the caller has one (the analyzer's)."""
    if "__global__" not in source_text and "<<<" not in source_text:
        return EMPTY               # no kernel, no launch: nothing to parse for
    data = encode(source_text)
    root = (tree or parse_yielding(new_parser(), data)).root_node
    src = Source(data)
    fns = functions(root)
    kernels = []
    for fn in fns:
        if not fn.is_kernel:
            continue
        decl = fn.node.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        ident = decl.child_by_field_name("declarator") if decl is not None else None
        span = src.span(ident) if ident is not None else src.span(fn.node)
        kernels.append(Kernel(fn.name, span, fn.node.start_point[0], fn.launch_bounds))
    launches = []
    seen: set[int] = set()
    # Only around each `<<<` (not a walk of every node: files of 100k nodes are common).
    at = data.find(b"<<<")
    while at != -1:
        node = root.descendant_for_byte_range(at, at + 3)
        while node is not None and node.type != "call_expression":
            node = node.parent
        if node is not None and node.start_byte not in seen:
            seen.add(node.start_byte)
            config = next((c for c in node.named_children if c.type == "kernel_call_syntax"), None)
            if config is not None:
                name = text(node.child_by_field_name("function")).split("::")[-1].split("<")[0].strip()
                launches.append(Launch(name, src.span(config), src.span(node)))
        at = data.find(b"<<<", at + 3)
    launches.sort(key=lambda launch: launch.span)
    return Outline(kernels, launches, file_facts(root, fns))


def contains(span: Span, line: int, column: int) -> bool:
    return (span[0], span[1]) <= (line, column) <= (span[2], span[3])
