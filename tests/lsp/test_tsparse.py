"""The chunked tree-sitter parse (dice_engine.tsparse) gives the bytes parse's tree, and a tree
whose `Node.text` is as cheap as a bytes-parsed one's: the static pass reads `Node.text` tens of
thousands of times per keystroke, and a callback-parsed tree made each read ~200× dearer
(issue 18: the per-keystroke CPU of benchmarks/lsp_latency.py went from 13 ms to over 60 ms)."""

from __future__ import annotations

import time

import tree_sitter_cuda
from tree_sitter import Language, Node, Parser

from dice_engine.tsparse import AT_ONCE, CHUNK, parse_yielding

KERNEL = b"""__global__ void scale_%d(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i];
}
"""
SOURCE = b"".join(KERNEL % i for i in range(2000))  # ~250 kB: many chunks


def parser() -> Parser:
    return Parser(Language(tree_sitter_cuda.language()))


def cost_of_text(node: Node, reads: int = 300) -> float:
    """The best of five timings of `reads` reads of `node.text` (robust to a loaded machine)."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(reads):
            node.text  # noqa: B018 — the read is what is timed
        best = min(best, time.perf_counter() - start)
    return best


def test_the_chunked_parse_is_the_bytes_parse():
    assert len(SOURCE) > max(10 * CHUNK, AT_ONCE)  # parsed in chunks
    chunked, whole = parse_yielding(parser(), SOURCE), parser().parse(SOURCE)
    assert str(chunked.root_node) == str(whole.root_node)
    node = chunked.root_node.children[1500]
    assert node.text == SOURCE[node.start_byte : node.end_byte]


def test_node_text_on_a_chunked_tree_is_as_cheap_as_on_a_bytes_tree():
    chunked, whole = parse_yielding(parser(), SOURCE), parser().parse(SOURCE)
    fast = cost_of_text(whole.root_node.children[1500])
    assert cost_of_text(chunked.root_node.children[1500]) < 10 * fast


def test_an_incremental_chunked_parse_keeps_cheap_text():
    p = parser()
    old = parse_yielding(p, SOURCE)
    edited = SOURCE.replace(b"scale_7(", b"scale_77(", 1)
    at = SOURCE.index(b"scale_7(") + len(b"scale_7")
    row, column = SOURCE.count(b"\n", 0, at), at - SOURCE.rfind(b"\n", 0, at) - 1
    old.edit(
        start_byte=at,
        old_end_byte=at,
        new_end_byte=at + 1,
        start_point=(row, column),
        old_end_point=(row, column),
        new_end_point=(row, column + 1),
    )
    tree = parse_yielding(p, edited, old)
    assert str(tree.root_node) == str(p.parse(edited).root_node)
    node = tree.root_node.children[1500]
    assert node.text == edited[node.start_byte : node.end_byte]
    assert cost_of_text(node) < 10 * cost_of_text(p.parse(edited).root_node.children[1500])


def test_a_small_text_is_parsed_at_once_with_the_same_tree():
    small = SOURCE[: AT_ONCE // 2]
    tree = parse_yielding(parser(), small)
    assert str(tree.root_node) == str(parser().parse(small).root_node)
    node = tree.root_node.children[100]
    assert node.text == small[node.start_byte : node.end_byte]
