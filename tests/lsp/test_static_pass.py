"""The static pass (run on every keystroke) does the analyses and finds the intents, and no
more: the outline for hover and code lens is made when they ask, from the pass's own tree
(issue 18: making it on every keystroke had doubled the pass's CPU time)."""

from __future__ import annotations

from dice_engine.analysis import Analyzer
from dice_engine.intent.regions import LINE_BREAK, split_lines
from dice_lsp import documents
from dice_lsp.documents import DocumentState
from dice_lsp.features.diagnostics import static_pass

SOURCE = """#define N 1024
__global__ void scale(float* x, float a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) x[i] = a * x[i];
}

void run(float* x) {
    scale<<<N / 256, 256>>>(x, 2.0f);
}
"""


def test_the_outline_is_made_on_demand_from_the_static_pass_tree(monkeypatch):
    made = []
    real = documents.outline
    monkeypatch.setattr(documents, "outline", lambda text, tree=None: made.append(tree) or real(text, tree))
    state = DocumentState(uri="file:///p/k.cu", path="/p/k.cu", analyzer=Analyzer("/p/k.cu", "sm_90"))
    static_pass(state, SOURCE, 1, "sm_90")
    edited = SOURCE.replace("2.0f", "3.0f")
    static_pass(state, edited, 2, "sm_90")  # the analyzer edits its own tree in place
    assert made == []  # typing never pays for the outline

    outline = state.outline(2, edited)
    assert len(made) == 1 and made[0] is not None  # no parse of its own: the pass's tree
    (kernel,) = outline.kernels
    assert kernel.name == "scale" and outline.threads_per_block(kernel) == 256
    (launch,) = outline.launches
    assert launch.kernel == "scale" and launch.call_span[0] == 7
    assert state.outline(2, edited) is outline and len(made) == 1  # cached per version


def test_an_outline_for_another_version_parses_its_own_text():
    state = DocumentState(uri="file:///p/k.cu", path="/p/k.cu", analyzer=Analyzer("/p/k.cu", "sm_90"))
    static_pass(state, SOURCE, 1, "sm_90")
    moved = "\n\n" + SOURCE
    (launch,) = state.outline(5, moved).launches  # not version 1's tree
    assert launch.call_span[0] == 9


def test_the_pass_splits_lines_where_the_lsp_does():
    text = "a\r\nb\rc\nd\x0ce\u2028f\n\r\n"
    assert LINE_BREAK.split(text) == split_lines(text)[0] == ["a", "b", "c", "d\x0ce\u2028f", "", ""]
