"""Intent findings in a real `dice-lsp` process: an intent that needs several kernels is served
(the general lowering), one only a model could serve is one diagnostic on its line, and the
file's other diagnostics are still published."""
from __future__ import annotations

from lsprotocol import types

from .test_lsp import DOUBLE_LITERAL, UNSERVABLE, codes

TWO_KERNELS = """#include <cuda_runtime.h>

// @dice: y = softmax(x @ W, dim=1); x: f32[4096, 1024]; W: f32[1024, 1024]
// @dice: y = torch.roll(x, 1); x: f32[1024]

__global__ void scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 0.5;
}
"""


async def test_an_intent_needing_several_kernels_keeps_every_diagnostic_of_the_file(session):
    editor = await session(settings={"compileOnChange": False})
    uri = editor.open("two.cu", TWO_KERNELS)
    diags = await editor.diagnostics(uri, where=lambda d: {UNSERVABLE, DOUBLE_LITERAL} <= codes(d))
    (intent,) = [d for d in diags if d.code == UNSERVABLE]
    assert intent.range.start.line == 3 and intent.severity == types.DiagnosticSeverity.Error
    assert "only a model" in intent.message
    (literal,) = [d for d in diags if d.code == DOUBLE_LITERAL]
    assert literal.range.start.line == 7
