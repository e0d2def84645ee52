"""Hostile inputs for the language server: texts that once froze it or broke its analysis."""
from __future__ import annotations


def long_expression(terms: int = 100_000) -> str:
    """One statement of `terms` terms (`a + a + ...`): a syntax tree that deep."""
    return "__global__ void k(float* x, float a) {\n    x[0] = " + " + ".join(["a"] * terms) + ";\n}\n"


def many_intents(count: int = 10_000) -> str:
    return "".join(f"// @dice: y{i} = relu(x{i}); x{i}: f32[4096]\nint v{i} = {i};\n" for i in range(count))


def big_file(size: int = 5_000_000) -> str:
    unit = ("__global__ void k{i}(float* x, int n) {{\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i < n) x[i] = x[i] * 2.0f + {i}.0f;\n}}\n\n")
    parts, total, i = [], 0, 0
    while total < size:
        part = unit.format(i=i)
        parts.append(part)
        total += len(part)
        i += 1
    return "".join(parts)


def nested_braces(depth: int = 5_000) -> str:
    return "__global__ void k(float* x) {\n" + "{" * depth + "x[0] = 1.0f;" + "}" * depth + "\n}\n"


def nested_parentheses(depth: int = 1_000) -> str:
    """Nested parentheses in an intent and in code."""
    nest = "(" * depth + "x" + ")" * depth
    return (f"// @dice: y = {nest}; x: f32[4096]\n__global__ void k(float* x) {{\n"
            f"    x[0] = {'(' * depth}1.0f{')' * depth};\n}}\n")


HOSTILE = {
    "100k-term line": long_expression,
    "10k intents": many_intents,
    "5 MB file": big_file,
    "5,000 nested braces": nested_braces,
    "1,000 nested parentheses": nested_parentheses,
}
