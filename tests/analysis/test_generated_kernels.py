"""Kernels DICE generates are clean under its own analyses.

Every sketch of the registry renders its default point and its design space's corners for every
sample intent of its family (the points a search may pick); the static analyses must report
nothing. KNOWN_KERNEL_ISSUES lists the findings on generated code that were judged real (the
kernel, not the analysis, is wrong); the sketch owners remove an entry when they fix the kernel,
and any other finding fails this test.
"""
from __future__ import annotations

import pytest

from dice_engine.analysis import check_source
from dice_engine.arch import resolve
from dice_engine.intent import IntentError, parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.sketches import registry

ARCH = resolve("sm_90")

# (sketch, code): why the finding is real (none at present; the sketch owners add an entry
# when a generated kernel is judged wrong and remove it with the fix)
KNOWN_KERNEL_ISSUES: dict[tuple[str, str], str] = {}


def _fast_path(sketch) -> bool:
    """A hand-written sketch; the general lowering (pattern "*") is left to tests/lowering, its
    uncoalesced gathers (transposed convolutions, a thread per reduction domain) being known."""
    return sketch.pattern != "*"


def _cases():
    for family in registry.FAMILIES.values():
        if not any(map(_fast_path, family.sketches)):
            continue
        for intent in family.sample_intents:
            yield pytest.param(family, intent, id=f"{family.name}:{intent[:40]}")


@pytest.mark.parametrize("family, intent", list(_cases()))
def test_generated_kernels_have_no_unexplained_findings(family, intent):
    try:
        problem = classify(parse_intent(intent))
    except IntentError as exc:
        pytest.skip(f"the intent front-end rejects this sample: {exc.message}")
    unexplained = []
    rendered = 0
    for sketch in registry.ALL_SKETCHES:
        # the family's own fast paths, and every other fast path of the same pattern
        if not _fast_path(sketch) or (sketch not in family.sketches and sketch.pattern != problem.pattern):
            continue
        if sketch.unsupported(problem, ARCH):
            continue
        for point in [sketch.default_point(problem, ARCH), *sketch.space(problem, ARCH).corners()]:
            kernel = sketch.render(problem, ARCH, point, "dice_check")
            rendered += 1
            for f in check_source(kernel.source, f"{sketch.name}.cu"):
                if (sketch.name, f.code) not in KNOWN_KERNEL_ISSUES:
                    line = kernel.source.splitlines()[f.line].strip()
                    unexplained.append(f"{sketch.name} {point}:{f.line + 1}: {f.code} `{line}`: {f.message}")
    assert rendered, "no sketch served this sample intent"
    assert not unexplained, "\n".join(unexplained)
