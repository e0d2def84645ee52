"""`broadcast_offset`: the C expression that finds a broadcast operand's element from the linear
offset of the element being produced, checked against numpy's broadcasting on every offset."""
from __future__ import annotations

import re

import numpy as np
import pytest

from dice_engine.sketches.fusion import broadcast_offset, broadcasts_to


def evaluate(expression: str, offset: int, symbols: dict[str, int]) -> int:
    """The C expression's value for a non-negative `offset` (C's / and % agree with Python's // and
    % on non-negative operands)."""
    python = re.sub(r"(\d+)LL", r"\1", expression).replace("/", "//")
    return eval(python, {}, {"o": offset, **symbols})  # noqa: S307 — our own generated arithmetic


@pytest.mark.parametrize("shape, target", [
    ((4, 1, 1), (2, 4, 3, 5)),          # per channel beside NCHW
    ((1, 4, 1, 1), (2, 4, 3, 5)),
    ((5,), (2, 4, 3, 5)),               # per column
    ((4, 3, 1), (2, 4, 3, 5)),          # per (channel, row)
    ((2, 1, 3, 1), (2, 4, 3, 5)),       # outer and inner axes kept, two broadcast
    ((1, 1, 1), (2, 4, 3, 5)),          # one element
    ((), (2, 4, 3, 5)),
    ((6, 1, 1, 1), (2, 6, 2, 3, 2)),    # per channel beside NCDHW
])
def test_every_offset_reads_numpys_broadcast_element(shape, target):
    operand = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    expected = np.broadcast_to(operand, target).reshape(-1)
    expression = broadcast_offset("o", shape, target)
    assert [evaluate(expression, o, {}) for o in range(expected.size)] == expected.tolist()


def test_symbolic_extents_are_kernel_parameters():
    shape, target = (4, 1, 1), ("N", 4, "H", 5)
    expression = broadcast_offset("o", shape, target)
    assert "N" not in expression        # the outermost extent bounds the offset: never read
    sizes = {"N": 3, "H": 2}
    operand = np.arange(4).reshape(shape)
    expected = np.broadcast_to(operand, (3, 4, 2, 5)).reshape(-1)
    assert [evaluate(expression, o, sizes) for o in range(expected.size)] == expected.tolist()


def test_same_shape_reads_the_offset_itself_and_growing_shapes_do_not_broadcast():
    assert broadcast_offset("o", (2, 3), (2, 3)) == "o"
    assert broadcasts_to((4, 1, 1), (2, 4, 3, 5)) and broadcasts_to((), (7,))
    assert not broadcasts_to((3, 1, 1), (2, 4, 3, 5))        # 3 against 4
    assert not broadcasts_to((2, 2, 4, 3, 5), (2, 4, 3, 5))  # more axes than the target
