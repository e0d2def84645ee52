"""Small C-text helpers the lowering's kernel writers share."""

from __future__ import annotations


def decompose(var: str, names: list[str], dims: tuple, rem: str) -> list[str]:
    """C lines that split the linear index `var` into `names` over `dims` (row-major)."""
    if not names:
        return []
    lines = [f"long long {rem} = {var};"]
    for k in range(len(names) - 1, 0, -1):
        d = dims[k]
        size = f"{d}LL" if isinstance(d, int) else f"(long long){d}"
        lines.append(f"const long long {names[k]} = {rem} % {size}; {rem} /= {size};")
    lines.append(f"const long long {names[0]} = {rem};")
    return lines


def indent(lines: list[str], depth: int) -> list[str]:
    return ["    " * depth + line for line in lines]
