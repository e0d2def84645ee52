"""Finding intents and their generated regions in a CUDA source file.

Only line comments that stand on their own line count (a `// @dice:` after code on its line is
reported in `Intents.trailing`, not read). tree-sitter-cuda decides what is a comment: a
`// @dice:` inside a block comment or a string literal is not an intent. Where the file does not
parse, tree-sitter's error recovery still yields the comments, and a `//` line
that lands in no comment or string node is taken as a comment, so intents are found in files
that are being typed. `find_intents` never raises; marker trouble is reported in `.problems`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import tree_sitter_cuda
from tree_sitter import Language, Parser, Tree

from ..tsparse import parse_yielding
from .regions import BEGIN, END, body_hash, intact_prefix, intent_hash, parse_begin, split_lines

_LANGUAGE = Language(tree_sitter_cuda.language())
_INTENT = re.compile(r"^[ \t]*//\s*@dice:")
_COMMENT = re.compile(r"^[ \t]*//")
_STRING_NODES = {"string_literal", "raw_string_literal", "char_literal", "string_content",
                 "raw_string_content", "system_lib_string", "escape_sequence"}


@dataclass
class Region:
    begin_line: int          # 0-based lines of the marker lines
    end_line: int
    recorded_hash: str       # the intent hash written in the begin marker
    summary: str
    stale: bool              # recorded hash != the intent's hash now
    edited: bool             # the body no longer matches the body hash in the marker
    body_hash: str | None    # as recorded (None: the marker has none, so edits cannot be told)
    # The line where the region's own @dice-end was when its generated body is intact but the
    # region now reaches a later @dice-end (the line was deleted): the markers no longer pair
    # up, and what lies between is not DICE's to overwrite. None when they pair up.
    missing_end: int | None = None


@dataclass
class IntentSite:
    text: str                # the intent's text, continuation lines joined with "\n"
    hash: str
    line: int                # 0-based, the first and last comment lines of the intent
    end_line: int
    region: Region | None
    segments: list[tuple[int, int, int]] = field(repr=False)   # (line, column, offset in text) per line

    def offset_to_position(self, offset: int) -> tuple[int, int]:
        """The (line, column) in the file of `offset` into `text` (column in code points)."""
        offset = max(0, min(offset, len(self.text)))
        line, column, start = self.segments[0]
        for seg in self.segments:
            if seg[2] > offset:
                break
            line, column, start = seg
        return line, column + offset - start


@dataclass(frozen=True)
class MarkerProblem:
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    restore_end_at: int | None = None   # the line where inserting a @dice-end pairs the markers again


class Intents(list):
    """The intents of a file, in order; `problems` lists orphan, malformed or unterminated markers;
    `trailing` the `// @dice:` comments that follow code on their line, which are not read."""

    def __init__(self, sites: list[IntentSite], problems: list[MarkerProblem],
                 trailing: list[MarkerProblem] | None = None):
        super().__init__(sites)
        self.problems = problems
        self.trailing = trailing or []


def comment_lines(source: str, lines: list[str], ends: list[str], tree: Tree | None = None) -> list[bool]:
    """For each line, whether it is a line comment standing on its own. `tree`: the file's
    tree-sitter-cuda parse of `source`, when the caller has one (saves a second parse)."""
    if tree is None:
        tree = parse_yielding(Parser(_LANGUAGE), source.encode("utf-8", "surrogatepass"))
    root = tree.root_node
    flags: list[bool] = []
    byte = 0
    for text, end in zip(lines, ends):
        m = _COMMENT.match(text)
        if m:
            at = byte + len(text[:m.end() - 2].encode("utf-8", "surrogatepass"))
            node = root.descendant_for_byte_range(at, at + 2)
            if node is not None and node.type == "comment":
                flags.append(node.start_byte == at)
            else:
                flags.append(node is None or node.type not in _STRING_NODES)
        else:
            flags.append(False)
        byte += len((text + end).encode("utf-8", "surrogatepass"))
    return flags


def find_intents(source: str, tree: Tree | None = None) -> Intents:
    """The intents of `source`. `tree`, when given, must be the tree-sitter-cuda parse of
    `source` encoded as UTF-8 with surrogatepass (what the analyzer parses)."""
    if "@dice" not in source:           # every marker holds it: nothing to find, no parse
        return Intents([], [])
    lines, ends = split_lines(source)
    if tree is None:
        tree = parse_yielding(Parser(_LANGUAGE), source.encode("utf-8", "surrogatepass"))
    is_comment = comment_lines(source, lines, ends, tree)
    sites: list[IntentSite] = []
    problems: list[MarkerProblem] = []

    def problem(line: int, message: str) -> None:
        problems.append(MarkerProblem(line, 0, line, len(lines[line]), message))

    def is_marker(i: int) -> bool:
        return is_comment[i] and bool(BEGIN.match(lines[i]) or END.match(lines[i]))

    i = 0
    while i < len(lines):
        if not is_comment[i]:
            i += 1
            continue
        if _INTENT.match(lines[i]):
            first, segments, parts, offset = i, [], [], 0
            while True:
                head = _INTENT.match(lines[i]) if i == first else _COMMENT.match(lines[i])
                raw = lines[i][head.end():]
                column = head.end() + len(raw) - len(raw.lstrip())
                part = raw.strip()
                segments.append((i, column, offset))
                parts.append(part)
                offset += len(part) + 1
                nxt = i + 1
                if nxt >= len(lines) or not is_comment[nxt] or is_marker(nxt) or _INTENT.match(lines[nxt]) \
                        or not continues("\n".join(parts), lines[nxt][_COMMENT.match(lines[nxt]).end():]):
                    break
                i = nxt
            text = "\n".join(parts)
            site = IntentSite(text, intent_hash(text), first, i, None, segments)
            i = _attach_region(site, lines, is_comment, i + 1, problem, problems)
            sites.append(site)
            continue
        if BEGIN.match(lines[i]):
            problem(i, "a @dice-begin marker with no @dice: intent directly above it")
            i = _skip_region(lines, is_comment, i, problem)
            continue
        if END.match(lines[i]):
            problem(i, "a @dice-end marker with no @dice-begin before it")
        i += 1
    return Intents(sites, problems, trailing_intents(lines, ends, is_comment, tree))


_TRAILING = re.compile(r"//\s*@dice:")


def trailing_intents(lines: list[str], ends: list[str], is_comment: list[bool],
                     tree: Tree) -> list[MarkerProblem]:
    """`// @dice:` comments after code (or a block comment) on their line: real comments (not in
    a string), not intents, because a region is written on the lines below its intent and
    code before it would leave the kernel inside a statement or a function."""
    out: list[MarkerProblem] = []
    if not any("@dice:" in text and not comment for text, comment in zip(lines, is_comment)):
        return out
    byte = 0
    for i, (text, end) in enumerate(zip(lines, ends)):
        if not is_comment[i] and "@dice:" in text:
            for m in _TRAILING.finditer(text):
                at = byte + len(text[:m.start()].encode("utf-8", "surrogatepass"))
                node = tree.root_node.descendant_for_byte_range(at, at + 2)
                if node is not None and node.type == "comment" and node.start_byte == at:
                    out.append(MarkerProblem(
                        i, m.start(), i, len(text.rstrip()),
                        "this @dice: comment follows other text on its line, so it is not read as an "
                        "intent (a kernel is written on the lines below its intent): put it on a line of "
                        "its own"))
                    break
        byte += len((text + end).encode("utf-8", "surrogatepass"))
    return out


_UNFINISHED = re.compile(r"[;,(\[{+\-*/@=|&<>:，；、：]\s*$")
# a statement of the tensor form: a declaration (`x, w: f32[...]`) or an assignment or option
# (`y = ...`, `N=4096`, `arch=sm_90`)
_STATEMENT = re.compile(r"\s*(?:[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s*:\s*[A-Za-z]\w*\s*\["
                        r"|[A-Za-z_]\w*\s*=(?!=))")


def continues(intent: str, line: str) -> bool:
    """Whether a comment line directly below an intent goes on with it: the intent so far is
    unfinished (it ends with `;`, `,`, an operator or an open bracket, or leaves a bracket open),
    or the line is a statement of the tensor form. Any other comment is the user's own."""
    if not line.strip():
        return False
    open_brackets = sum(intent.count(c) for c in "([{") - sum(intent.count(c) for c in ")]}")
    if _UNFINISHED.search(intent) or open_brackets > 0:
        return True
    return bool(_STATEMENT.match(line))


def _attach_region(site: IntentSite, lines: list[str], is_comment: list[bool], start: int, problem,
                   problems: list[MarkerProblem]) -> int:
    """Attach the region that begins below the intent (blank lines and the user's own comments
    may separate them); return the next line to scan."""
    j = start
    while j < len(lines) and (not lines[j].strip() or (
            is_comment[j] and not BEGIN.match(lines[j]) and not END.match(lines[j])
            and not _INTENT.match(lines[j]) and _COMMENT.match(lines[j]))):
        j += 1
    if j >= len(lines) or not is_comment[j] or not BEGIN.match(lines[j]):
        return start
    fields = parse_begin(BEGIN.match(lines[j]).group("rest"))
    end = _region_end(lines, is_comment, j)
    if end is None:
        problem(j, "this @dice-begin marker has no @dice-end below it")
        return j + 1
    if fields is None:
        problem(j, "malformed @dice-begin marker: expected '// @dice-begin <12-hex intent hash> <summary>'")
        return end + 1
    recorded, summary, recorded_body = fields
    body = lines[j + 1:end]
    edited = recorded_body is not None and body_hash(body) != recorded_body
    site.region = Region(j, end, recorded, summary, stale=recorded != site.hash, edited=edited,
                         body_hash=recorded_body)
    if edited and (intact := intact_prefix(body, recorded_body)) is not None:
        missing = j + 1 + intact
        site.region.missing_end = missing
        problems.append(MarkerProblem(
            j, 0, j, len(lines[j]),
            f"this region's @dice-end line is missing: the kernel ends on line {missing}, but the "
            f"region now runs on to the @dice-end on line {end + 1}, over code that is not DICE's; "
            "DICE will not regenerate it until its @dice-end is restored", restore_end_at=missing))
    return end + 1


def _region_end(lines: list[str], is_comment: list[bool], begin: int) -> int | None:
    """The line of the @dice-end closing the region at `begin`, or None if another marker or an
    intent comes first (or the file ends)."""
    for k in range(begin + 1, len(lines)):
        if not is_comment[k]:
            continue
        if END.match(lines[k]):
            return k
        if BEGIN.match(lines[k]) or _INTENT.match(lines[k]):
            return None
    return None


def _skip_region(lines: list[str], is_comment: list[bool], begin: int, problem) -> int:
    end = _region_end(lines, is_comment, begin)
    if end is None:
        problem(begin, "this @dice-begin marker has no @dice-end below it")
        return begin + 1
    return end + 1
