"""`dice generate` with a model, as a user runs it: a real `dice` process against the scripted
server process. Exit 0 with a kernel (after a repair round when needed); exit 1 with one line
after N bad replies, a timeout or an HTTP error; exit 2 for an unusable setting."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from replies import TOPK, kernel_reply

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


def dice(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("DICE_LLM_")} | (env or {})
    return subprocess.run([sys.executable, "-m", "dice_engine", *args], capture_output=True, text=True,
                          timeout=300, env=full_env)


def test_a_kernel_after_one_repair_round(scripted_model):
    model = scripted_model([kernel_reply("topk_compile_error"), kernel_reply("topk_good")])
    done = dice("generate", TOPK, "--llm", model.url, "--model", "scripted", "--format", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["sketch"] == "model:scripted" and result["verified"] is None
    assert "torch_f32_256x4_launch" in result["launcher"] and result["resources"]["registers"] > 0
    assert len(model.requests()) == 2


def test_environment_variables_name_the_model(scripted_model):
    model = scripted_model([kernel_reply("topk_good")])
    done = dice("generate", TOPK, env={"DICE_LLM_BASE_URL": model.url, "DICE_LLM_MODEL": "envmodel",
                                       "DICE_LLM_API_KEY": "sk-env"})
    assert done.returncode == 0, done.stderr
    assert "NOT VERIFIED" in done.stdout and "envmodel" in done.stdout
    (request,) = model.requests()
    assert request["authorization"] == "Bearer sk-env" and request["body"]["model"] == "envmodel"


def test_after_n_bad_replies_exit_1_with_one_line(scripted_model):
    model = scripted_model([{"content": "no code, sorry"}])
    done = dice("generate", TOPK, "--llm", model.url, "--model", "m", "--llm-rounds", "1")
    assert done.returncode == 1 and done.stdout == ""
    (line,) = [text for text in done.stderr.splitlines() if text.startswith("dice generate:")]
    assert line == ("dice generate: the model gave no acceptable kernel in 2 rounds; last: the model's reply "
                    "holds no CUDA code (it begins: 'no code, sorry')")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("entry,words", [
    ({"content": "late", "delay_s": 5}, "did not answer within 1 s"),
    ({"status": 500, "body": {"error": {"message": "out of memory"}}}, "HTTP 500"),
    ({"status": 429, "body": {}}, "HTTP 429 (rate limited"),
])
def test_timeouts_and_http_errors_are_clear_messages(scripted_model, entry, words):
    model = scripted_model([entry])
    done = dice("generate", TOPK, "--llm", model.url, "--model", "m", "--llm-timeout", "1")
    assert done.returncode == 1 and words in done.stderr and "Traceback" not in done.stderr


def test_unusable_settings_are_usage_errors():
    done = dice("generate", TOPK, "--llm", "127.0.0.1:8000", "--model", "m")
    assert done.returncode == 2 and "is not an http(s) URL" in done.stderr
    done = dice("generate", TOPK, "--llm", "http://127.0.0.1:8000/v1")
    assert done.returncode == 2 and "needs a model name" in done.stderr


def test_without_a_model_the_intent_says_what_it_needs():
    done = dice("generate", TOPK)
    assert done.returncode == 1 and "only a model can write a kernel" in done.stderr
