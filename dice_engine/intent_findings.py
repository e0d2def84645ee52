"""Intent diagnostics, on the intent's own lines: an intent the engine cannot parse or serve
(one that needs several kernels included), a region generated for a different intent (stale),
malformed or orphan markers, a stale region left alone on save because it was edited by hand,
and a model's kernel no GPU verified.

The one place both `dice check` and the language server get them from. Their codes, severities
and titles are the code table's (`analysis.codes.CODES`); the command line, for CI, raises a
stale region to an error (in the editor, saving regenerates it).
"""
from __future__ import annotations

from typing import Sequence

from .analysis.codes import CODES
from .analysis.findings import Finding, Fix, TextEdit
from .api import UNVERIFIED_MODEL_KERNEL, CUDAGenerator
from .intent import IntentError, Intents, IntentSite, find_intents
from .intent.regions import split_lines
from .ir.patterns import PatternError, classify
from .sketches.registry import candidates, why_unsupported

UNSERVABLE = "DICE-I001"      # the intent cannot be parsed or no sketch serves it
STALE_REGION = "DICE-I002"    # the region was generated for a different intent
MARKER = "DICE-I003"          # orphan, malformed or unterminated @dice-begin/@dice-end
EDITED_REGION = "DICE-I004"   # stale, but edited by hand: not regenerated on save
UNVERIFIED_MODEL = "DICE-I005"  # a model wrote the region's kernel and no GPU checked it
NEEDS_MODEL = ("only a model can write a kernel for this PyTorch expression: configure dice.llm.baseUrl "
               "and dice.llm.model (or dice.llm.modelPath)")


def file_intent_findings(text: str, path: str, arch: str, *, stale_is_error: bool = False) -> list[Finding]:
    """`intent_findings` for a whole file's text (the command line's entry)."""
    lines = split_lines(text)[0]
    return intent_findings(find_intents(text), path, lines, arch, stale_is_error=stale_is_error)


def _finding(path: str, span: tuple[int, int, int, int], code: str, message: str, **data: object) -> Finding:
    line, column, end_line, end_column = span
    info = CODES[code]
    return Finding(file=path, line=line, column=column, end_line=end_line, end_column=end_column,
                   category=info.category, code=code, severity=info.severity, message=message,
                   data=dict(data))


def _intent_span(site: IntentSite, lines: Sequence[str]) -> tuple[int, int, int, int]:
    last = lines[site.end_line] if site.end_line < len(lines) else ""
    return site.line, 0, site.end_line, len(last.rstrip("\r\n"))


def why_unservable(site: IntentSite, arch: str,
                   model: bool = False) -> tuple[str, int, int, str | None] | None:
    """(message, start, end offsets into the intent text, what that text should probably read)
    when the engine cannot serve the intent. The editor never assumes a size the intent does not
    give. With a `model` backend configured, what no sketch serves is the model's to write."""
    generator = CUDAGenerator(arch=arch, default_shape=None)
    try:
        program, _notes = generator.parse(site.text)
        spec = generator.target_for(program)
        problem = classify(program)
    except IntentError as exc:
        return exc.message, exc.start, exc.end, exc.suggestion
    except KeyError as exc:           # an arch= / gpu= option naming no known target
        return str(exc.args[0]) if exc.args else "unknown target", 0, len(site.text), None
    except PatternError as exc:
        return None if model else (str(exc), 0, len(site.text), None)
    if model:
        return None
    if problem.pattern == "torch":
        return NEEDS_MODEL, 0, len(site.text), None
    if not candidates(problem, spec):
        why = why_unsupported(problem, spec)
        return f"no kernel family serves this intent on {spec.name}: {why}", 0, len(site.text), None
    return None


def intent_findings(sites: Intents, path: str, lines: Sequence[str], arch: str,
                    model: bool = False, *, stale_is_error: bool = False) -> list[Finding]:
    out: list[Finding] = []
    for site in sites:
        problem = why_unservable(site, arch, model)
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
    for p in sites.problems:
        out.append(_finding(path, (p.line, p.column, p.end_line, p.end_column), MARKER, p.message))
    return out


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
