"""Finding intents and regions in real CUDA files (tree-sitter-cuda parses), and writing regions."""
from __future__ import annotations

import pytest

from dice_engine.intent import find_intents, intent_hash, region_edit, render_region
from dice_engine.intent.regions import apply_edit, split_lines
from dice_engine.intent_findings import file_intent_findings

KERNEL = """#include <cuda_runtime.h>

// plain comment
// @dice: y = softmax(x, dim=1);
//        x: f32[4096, 1024]
__global__ void other(float* p) { p[threadIdx.x] = 0.f; }

int main() {
    // @dice: s = sum(x, dim=0); x: f32[64, 64]
    return 0;
}
"""


def test_intents_and_continuation_lines():
    sites = find_intents(KERNEL)
    assert [s.text for s in sites] == ["y = softmax(x, dim=1);\nx: f32[4096, 1024]",
                                       "s = sum(x, dim=0); x: f32[64, 64]"]
    first, second = sites
    assert (first.line, first.end_line) == (3, 4)
    assert (second.line, second.end_line) == (8, 8)
    assert first.region is None and not sites.problems
    assert first.hash == intent_hash("y = softmax(x, dim=1); x: f32[4096, 1024]")


def test_the_analyzers_incrementally_edited_tree_finds_the_same_intents():
    """The language server hands `find_intents` the analyzer's tree instead of parsing again."""
    from dice_engine.analysis import Analyzer
    analyzer = Analyzer()
    analyzer.update(KERNEL.replace("softmax", "relu"))
    for text in (KERNEL, KERNEL.replace("// plain comment", '"// @dice: y = exp(x);"'), KERNEL + "/*"):
        analyzer.update(text)                     # an incremental re-parse of the previous text
        with_tree, alone = find_intents(text, analyzer.tree), find_intents(text)
        assert [(s.text, s.line, s.end_line, s.region) for s in with_tree] == \
            [(s.text, s.line, s.end_line, s.region) for s in alone]
        assert with_tree.problems == alone.problems


def test_a_file_without_markers_has_no_intents():
    sites = find_intents("__global__ void k(float* p) { p[0] = 1.0f; }  // dice is a word here\n")
    assert list(sites) == [] and sites.problems == []


def test_offset_to_position_maps_into_the_file():
    site = find_intents(KERNEL)[0]
    lines = KERNEL.split("\n")
    for needle in ("softmax", "x: f32", "1024]"):
        line, col = site.offset_to_position(site.text.index(needle))
        assert lines[line][col:].startswith(needle)


def test_intent_like_text_in_block_comments_and_strings_is_ignored():
    src = ('/*\n// @dice: y = relu(x); x: f32[4]\n*/\n'
           'const char* s = "// @dice: y = exp(x); x: f32[4]";\n'
           'int a; // @dice: y = abs(x); x: f32[4]\n'
           '// @dice: y = tanh(x); x: f32[4]\n')
    assert [s.text for s in find_intents(src)] == ["y = tanh(x); x: f32[4]"]


def test_an_intent_after_code_on_its_line_is_not_read_and_says_so():
    # after code, after a block comment with non-ASCII text: reported at the `//`, in code points;
    # the one in a string literal and the one inside a block comment are no comment of their own
    src = ('float s = 2.5f;  // @dice: y = relu(x); x: f32[64]\n'
           '\t/* état 🚀 */\t// @dice: y = sigmoid(a); a: f32[8]\n'
           'const char* t = "x // @dice: y = exp(x); x: f32[4]";\n'
           '/* // @dice: y = abs(x); x: f32[4] */\n'
           '    // @dice: y = tanh(x); x: f32[4]\n')
    intents = find_intents(src)
    assert [s.text for s in intents] == ["y = tanh(x); x: f32[4]"]
    assert [(p.line, p.column) for p in intents.trailing] == [(0, 17), (1, 14)]
    findings = file_intent_findings(src, "k.cu", "sm_90")
    assert [(f.code, f.line) for f in findings] == [("DICE-I006", 0), ("DICE-I006", 1)]
    assert "put it on a line of its own" in findings[0].message


def test_intents_found_in_a_file_that_does_not_parse():
    src = "__global__ void broken(float* p {\n  for (;;\n// @dice: y = relu(x)\n// x: f32[1024]\nint }}} (\n"
    sites = find_intents(src)
    assert [s.text for s in sites] == ["y = relu(x)\nx: f32[1024]"]
    assert (sites[0].line, sites[0].end_line) == (2, 3)


def test_continuation_stops_at_a_new_intent_and_at_blank_lines():
    src = "// @dice: y = relu(x); x: f32[4]\n// @dice: z = exp(x);\n// more\n\n// unrelated\n"
    sites = find_intents(src)
    assert [s.text for s in sites] == ["y = relu(x); x: f32[4]", "z = exp(x);\nmore"]


@pytest.mark.parametrize("below, continued", [
    ("// TODO: call it from main", False),            # the user's own comment, not the intent's
    ("// 末尾注释 🎉 must survive", False),
    ("// x: f32[1024]", True),                         # a declaration goes on with the intent
    ("// N=4096", True),                               # a size or an option too
    ("// arch=sm_90", True),
])
def test_a_comment_below_a_finished_intent_continues_it_only_as_a_statement(below, continued):
    src = f"// @dice: y = relu(x) * 2.5\n{below}\nint main() {{ return 0; }}\n"
    (site,) = find_intents(src)
    assert (site.end_line == 1) is continued


def test_an_unfinished_line_goes_on_below_and_a_region_below_a_users_comment_stays_attached():
    (site,) = find_intents("// @dice: row-wise softmax of a 4096x1024 fp32 matrix,\n// one warp per row\n")
    assert site.text == "row-wise softmax of a 4096x1024 fp32 matrix,\none warp per row"
    (site,) = find_intents("// @dice: y = softmax(x, dim=1; x: f32[8, 8]\n// what a mess\n")
    assert site.end_line == 1                        # a bracket left open: the intent is unfinished
    intent = "y = relu(x); x: f32[4]"
    region = render_region(intent_hash(intent), "elementwise", "int k;\n")
    src = f"// @dice: {intent}\n// TODO: call it\n" + region
    (site,) = find_intents(src)
    assert site.text == intent and site.region is not None and not site.region.stale


def check_only_range_changed(before: str, after: str, edit) -> None:
    """Every byte outside the edit's range is unchanged."""
    lines, ends = split_lines(before)

    def offset(line, col):
        return sum(len(t) + len(e) for t, e in zip(lines[:line], ends[:line])) + col

    start, end = offset(edit.line, edit.column), offset(edit.end_line, edit.end_column)
    assert after[:start] == before[:start]
    assert after[len(after) - (len(before) - end):] == before[end:]
    assert after[start:len(after) - (len(before) - end)] == edit.new_text


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("trailing", [True, False])
def test_insert_then_replace_region(newline, trailing):
    # Without a trailing line break the intent is the file's last line: the insertion path that
    # must add a line break before the region rather than after it.
    lines = ["#include <cstdio>", "  // @dice: y = relu(x); x: f32[1024]"]
    src = newline.join(lines + ["int main() { return 0; }", ""]) if trailing else newline.join(lines)
    site = find_intents(src)[0]
    edit = region_edit(src, site, "__global__ void k() {}\nvoid k_launch() {}\n", "elementwise.map vec=4")
    written = apply_edit(src, edit)
    check_only_range_changed(src, written, edit)
    assert "\r\n" not in written if newline == "\n" else written.count("\n") == written.count("\r\n")
    site = find_intents(written)[0]
    region = site.region
    assert region is not None and not region.stale and not region.edited
    assert region.summary == "elementwise.map vec=4" and region.recorded_hash == site.hash
    assert split_lines(written)[0][region.begin_line].startswith("  // @dice-begin ")

    edit2 = region_edit(written, site, "__global__ void k2() {}\n", "second")
    rewritten = apply_edit(written, edit2)
    check_only_range_changed(written, rewritten, edit2)
    assert "k2()" in rewritten and "void k()" not in rewritten
    assert rewritten.endswith(newline) == trailing
    assert find_intents(rewritten)[0].region.summary == "second"


def test_stale_and_edited_regions():
    body = "__global__ void k() {}\n"
    text = "y = relu(x); x: f32[8]"
    src = f"// @dice: {text}\n" + render_region(intent_hash(text), "s", body)
    assert find_intents(src)[0].region.stale is False
    changed_intent = src.replace("f32[8]", "f32[16]", 1)
    assert find_intents(changed_intent)[0].region.stale is True
    rewrapped = src.replace("y = relu(x);", "y  =  relu(x); ", 1)
    assert find_intents(rewrapped)[0].region.stale is False
    hand_edited = src.replace("void k()", "void k_fast()")
    region = find_intents(hand_edited)[0].region
    assert region.edited is True and region.stale is False
    crlf = src.replace("\n", "\r\n")
    assert find_intents(crlf)[0].region.edited is False


def test_region_after_blank_lines_still_belongs_to_the_intent():
    text = "y = exp(x); x: f32[8]"
    src = f"// @dice: {text}\n\n" + render_region(intent_hash(text), "s", "int k;\n")
    site = find_intents(src)[0]
    assert site.region is not None and site.region.begin_line == 2
    edit = region_edit(src, site, "int j;\n", "t")
    assert (edit.line, edit.end_line) == (2, 4)


def test_marker_problems_never_raise():
    src = ("// @dice-end\n"                                      # orphan end
           "// @dice-begin 0123456789ab stray\nint a;\n// @dice-end\n"  # begin with no intent
           "// @dice: y = relu(x); x: f32[4]\n"
           "// @dice-begin 0123456789ab s\nint b;\n")              # unterminated
    sites = find_intents(src)
    assert len(sites) == 1 and sites[0].region is None
    messages = [(p.line, p.message) for p in sites.problems]
    assert [line for line, _ in messages] == [0, 1, 5]
    assert "no @dice-begin" in messages[0][1]
    assert "no @dice: intent" in messages[1][1]
    assert "no @dice-end" in messages[2][1]


def test_malformed_begin_marker_is_a_problem():
    src = "// @dice: y = relu(x); x: f32[4]\n// @dice-begin nothex\nint b;\n// @dice-end\n"
    sites = find_intents(src)
    assert sites[0].region is None
    assert "malformed" in sites.problems[0].message


def test_non_ascii_columns_are_code_points():
    src = "// 中文注释\n    // @dice: 计算1024x1024的矩阵乘法\n"
    site = find_intents(src)[0]
    assert site.text == "计算1024x1024的矩阵乘法"
    assert site.offset_to_position(site.text.index("矩阵")) == (1, 4 + len("// @dice: 计算1024x1024的"))
