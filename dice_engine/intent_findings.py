"""Intent diagnostics, on the intent's own lines: an intent the engine cannot parse or serve
(one that needs several kernels included), a region generated for a different intent (stale),
malformed or orphan markers, a stale region left alone on save because it was edited by hand,
a model's kernel no GPU verified, and a `// @dice:` after code on its line (not read).

The one place both `dice check` and the language server get them from. Their codes, severities
and titles are the code table's (`analysis.codes.CODES`); the command line, for CI, raises a
stale region to an error (in the editor, saving regenerates it).
"""
from __future__ import annotations

import functools
import logging
from typing import Callable, Sequence

from .analysis.codes import CODES
from .analysis.findings import Finding, Fix, TextEdit
from .api import UNVERIFIED_MODEL_KERNEL, CUDAGenerator
from .intent import IntentError, Intents, IntentSite, find_intents
from .intent.regions import dominant_newline, split_lines
from .ir.patterns import classify
from .sketches.registry import candidates, why_unsupported

UNSERVABLE = "DICE-I001"      # the intent cannot be parsed or no sketch serves it
STALE_REGION = "DICE-I002"    # the region was generated for a different intent
MARKER = "DICE-I003"          # orphan, malformed or unterminated @dice-begin/@dice-end
EDITED_REGION = "DICE-I004"   # stale, but edited by hand: not regenerated on save
UNVERIFIED_MODEL = "DICE-I005"  # a model wrote the region's kernel and no GPU checked it
TRAILING_INTENT = "DICE-I006"   # a // @dice: comment after code on its line: not read
log = logging.getLogger(__name__)
NEEDS_MODEL = ("only a model can write a kernel for this PyTorch expression: configure dice.llm.baseUrl "
               "and dice.llm.model (or dice.llm.modelPath)")


def file_intent_findings(text: str, path: str, arch: str, *, stale_is_error: bool = False) -> list[Finding]:
    """`intent_findings` for a whole file's text (the command line's entry)."""
    lines = split_lines(text)[0]
    return intent_findings(find_intents(text), path, lines, arch, stale_is_error=stale_is_error,
                           newline=dominant_newline(text))


def _finding(path: str, span: tuple[int, int, int, int], code: str, message: str,
             fix: Fix | None = None, **data: object) -> Finding:
    line, column, end_line, end_column = span
    info = CODES[code]
    return Finding(file=path, line=line, column=column, end_line=end_line, end_column=end_column,
                   category=info.category, code=code, severity=info.severity, message=message,
                   fix=fix, data=dict(data))


def restore_end(lines: Sequence[str], begin_line: int, at: int, newline: str) -> Fix:
    """Insert the region's lost `// @dice-end` line where its generated body ends."""
    indent = lines[begin_line][:len(lines[begin_line]) - len(lines[begin_line].lstrip(" \t"))]
    return Fix("Restore the region's // @dice-end line",
               (TextEdit(at, 0, at, 0, f"{indent}// @dice-end{newline}"),))


def _intent_span(site: IntentSite, lines: Sequence[str]) -> tuple[int, int, int, int]:
    last = lines[site.end_line] if site.end_line < len(lines) else ""
    return site.line, 0, site.end_line, len(last.rstrip("\r\n"))


def why_unservable(site: IntentSite, arch: str,
                   model: bool = False) -> tuple[str, int, int, str | None] | None:
    """(message, start, end offsets into the intent text, what that text should probably read)
    when the engine cannot serve the intent. The editor never assumes a size the intent does not
    give. With a `model` backend configured, what no sketch serves is the model's to write."""
    return _why_unservable(site.text, arch, model)


@functools.lru_cache(maxsize=16384)
def _why_unservable(text: str, arch: str, model: bool) -> tuple[str, int, int, str | None] | None:
    """Cached per intent text and target: a keystroke re-checks only the intents it changed
    (a file of 10,000 intents took a second per keystroke)."""
    generator = CUDAGenerator(arch=arch, default_shape=None)
    try:
        program, _notes = generator.parse(text)
        spec = generator.target_for(program)
        problem = classify(program)
    except IntentError as exc:
        return exc.message, exc.start, exc.end, exc.suggestion
    except KeyError as exc:           # an arch= / gpu= option naming no known target
        return str(exc.args[0]) if exc.args else "unknown target", 0, len(text), None
    if model:
        return None
    if problem.pattern == "torch":
        return NEEDS_MODEL, 0, len(text), None
    if not candidates(problem, spec):
        why = why_unsupported(problem, spec)
        return f"no kernel family serves this intent on {spec.name}: {why}", 0, len(text), None
    return None


def intent_findings(sites: Intents, path: str, lines: Sequence[str], arch: str,
                    model: bool = False, *, stale_is_error: bool = False, newline: str = "\n",
                    lost_ends_by_caller: bool = False) -> list[Finding]:
    """The intent findings of a file. One intent that cannot be analysed (a bug, an input no
    check foresaw) is one finding on its line, never the loss of the others'. A region that lost
    its own @dice-end is reported with a quick fix that restores it, unless the caller judges
    those itself (`lost_ends_by_caller`: the language server, which remembers where each region
    last stood intact; see `pairing_findings`)."""
    out: list[Finding] = []
    for site in sites:
        try:
            problem = why_unservable(site, arch, model)
        except Exception as exc:   # noqa: BLE001 — reported on the intent, the rest go on
            log.exception("analysing the intent on line %d failed", site.line + 1)
            problem = (f"DICE could not analyse this intent ({type(exc).__name__}: {exc})", 0, len(site.text),
                       None)
        if problem is not None:
            message, start, end, suggestion = problem
            (l0, c0), (l1, c1) = site.offset_to_position(start), site.offset_to_position(max(end, start + 1))
            finding = _finding(path, (l0, c0, l1, c1), UNSERVABLE, message)
            if suggestion is not None and end > start:     # "did you mean X?": replace the word
                finding.fix = Fix(f"Replace '{site.text[start:end]}' with '{suggestion}'",
                                  (TextEdit(l0, c0, l1, c1, suggestion),))
            out.append(finding)
        region = site.region
        if region is not None and region.stale:
            how = ("it was edited by hand, so DICE will not overwrite it on save"
                   if region.edited else "save (dice.regenerateOnSave) or run “DICE: Regenerate kernel”")
            stale = _finding(path, _intent_span(site, lines), STALE_REGION,
                             f"the kernel below was generated for a different intent; {how}")
            if stale_is_error:
                stale.severity = "error"
            out.append(stale)
        if region is not None and UNVERIFIED_MODEL_KERNEL in region.summary:
            out.append(_finding(path, _intent_span(site, lines), UNVERIFIED_MODEL,
                                "a model wrote the kernel below and no GPU verified it against the "
                                "reference: it compiled and passed the static checks, nothing more"))
    for p in sites.trailing:
        out.append(_finding(path, (p.line, p.column, p.end_line, p.end_column), TRAILING_INTENT, p.message))
    for p in sites.problems:
        if p.restore_end_at is None:
            out.append(_finding(path, (p.line, p.column, p.end_line, p.end_column), MARKER, p.message))
        elif not lost_ends_by_caller:
            out.append(_finding(path, (p.line, p.column, p.end_line, p.end_column), MARKER, p.message,
                                restore_end(lines, p.line, p.restore_end_at, newline)))
    return out


def pairing_findings(sites: Intents, path: str, text: str,
                     unpaired: Callable[[IntentSite], bool]) -> list[Finding]:
    """A finding on the begin marker of each region whose markers no longer pair up (`unpaired`
    judges it): with the restore quick fix where the text shows where the generated body ends."""
    out: list[Finding] = []
    broken = [s for s in sites if s.region is not None and unpaired(s)]
    if not broken:
        return out
    lines, newline = split_lines(text)[0], dominant_newline(text)
    for site in broken:
        assert site.region is not None
        problem = next((p for p in sites.problems if p.line == site.region.begin_line
                        and p.restore_end_at is not None), None)
        if problem is not None:
            fix = restore_end(lines, problem.line, problem.restore_end_at, newline)
            out.append(_finding(path, (problem.line, problem.column, problem.end_line, problem.end_column),
                                MARKER, problem.message, fix))
        else:
            out.append(lost_end_finding(path, site, lines))
    return out


def lost_end_finding(path: str, site: IntentSite, lines: Sequence[str]) -> Finding:
    """The region's @dice-end line, where the server last saw the region intact, was deleted or
    edited: it now reaches a later @dice-end, over lines that may not be DICE's."""
    assert site.region is not None
    begin = site.region.begin_line
    return _finding(path, (begin, 0, begin, len(lines[begin])), MARKER,
                    "this region's own @dice-end line was deleted or edited, so the region now runs on "
                    f"to the @dice-end on line {site.region.end_line + 1}, over lines that may not be "
                    "DICE's; DICE will not regenerate it. Put a // @dice-end back after the kernel, or "
                    "delete the region with its markers and generate again")


def edited_region_note(path: str, site: IntentSite, lines: Sequence[str]) -> Finding:
    return _finding(path, _intent_span(site, lines), EDITED_REGION,
                    "the intent changed but its kernel region was edited by hand, so it was not "
                    "regenerated on save; use “DICE: Regenerate kernel (replace your edits in the "
                    "region)” to overwrite it",
                    hash=site.hash)


def still_true(notes: list[Finding], sites: list[IntentSite], lines: Sequence[str],
               path: str) -> list[Finding]:
    """The edited-region notes whose intent still has a stale, hand-edited region, moved to
    where that intent is now."""
    by_hash = {s.hash: s for s in sites}
    kept = []
    for note in notes:
        site = by_hash.get(note.data["hash"])
        if site is not None and site.region is not None and site.region.stale and site.region.edited:
            kept.append(edited_region_note(path, site, lines))
    return kept
