"""Code out of a model's reply."""
from __future__ import annotations

import pytest

from dice_engine.llm.extract import NoCode, extract_code, missing_launcher

LAUNCHER = 'extern "C" void k_launch(const float* x, float* y, cudaStream_t stream) { }\n'


def test_the_block_with_the_launcher_wins_over_thinking_and_snippets():
    reply = ("<think>maybe ```cuda\n__global__ void draft();\n" + LAUNCHER + "```</think>\n"
             "A helper:\n```cpp\n__global__ void helper() {}\n```\n"
             "The kernel:\n```cuda\n__global__ void k() {}\n" + LAUNCHER + "```\nDone.")
    code = extract_code(reply, "k")
    assert code.startswith("__global__ void k() {}") and "draft" not in code and "helper" not in code


def test_an_unterminated_fence_and_bare_code_are_taken():
    assert extract_code("```cuda\n__global__ void k() {}\n" + LAUNCHER, "k").endswith("{ }\n")
    assert extract_code("__global__ void k() {}\n" + LAUNCHER, "k").startswith("__global__")


def test_a_python_block_is_not_cuda():
    with pytest.raises(NoCode, match="holds no CUDA code"):
        extract_code("```python\nprint('hi')\n```", "k")
    with pytest.raises(NoCode, match="empty"):
        extract_code("<think>only thoughts</think>", "k")


def test_a_missing_launcher_says_which_signature_is_wanted():
    wanted = 'extern "C" void k_launch(float* y, cudaStream_t stream)'
    why = missing_launcher("__global__ void k() {}", "k", wanted)
    assert why is not None and "k_launch(float* y, cudaStream_t stream)" in why
    assert missing_launcher(LAUNCHER, "k", "") is None
