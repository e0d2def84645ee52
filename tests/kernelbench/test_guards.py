"""The eval-side guards: pure checks on CPU here; with a GPU, `dice kernelbench --eval` on a
deliberately cheating ModelNew for each known hack (and an honest control)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from dice_engine.kernelbench.evaluate import evaluate
from dice_engine.kernelbench.guards import PatchGuard, aliased_output, dtype_mismatch, mutated_inputs

from .conftest import CHEATS, TASKS


def test_patch_guard_names_a_replaced_timer(monkeypatch):
    guard = PatchGuard()
    assert guard.patched() is None
    monkeypatch.setattr(torch.cuda.Event, "elapsed_time", lambda self, end: 1e-6)
    assert "torch.cuda.Event.elapsed_time" in (guard.patched() or "")


def test_patch_guard_names_a_replaced_torch_function(monkeypatch):
    guard = PatchGuard()
    monkeypatch.setattr(torch, "allclose", lambda *a, **k: True)
    assert "torch.allclose" in (guard.patched() or "")


def test_torch_compile_is_not_read_as_a_patch():
    """Dynamo wraps torch.manual_seed when first imported (torch.compile's baseline, --compile):
    eval_child loads it before the guard's snapshot. Run in a fresh interpreter, where Dynamo is
    not imported yet (this process's other tests may have imported it)."""
    code = """
import torch
from dice_engine.kernelbench.guards import PatchGuard
from dice_engine.kernelbench.eval_child import load_compiler
late = PatchGuard()
load_compiler()
early = PatchGuard()
torch.compile(torch.nn.ReLU())(torch.ones(4))
print(repr(late.patched()), repr(early.patched()))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).parents[2])
    late, early = done.stdout.strip().rsplit(" ", 1) if done.returncode == 0 else (done.stderr, "")
    assert "torch.manual_seed" in late   # what the guard saw before the fix
    assert early == "None"


def test_an_evaluation_process_timing_torch_compile_can_serve_the_next_pair():
    """The process-wide guard, too, is taken after Dynamo is loaded: before, every pair timed
    beside torch.compile ended its process (a fresh one per task: 10 tasks took 320 s on an H100)."""
    code = """
import torch
from dice_engine.kernelbench.eval_child import process_state
guard, flags = process_state({"compile": True})
torch.compile(torch.nn.ReLU())(torch.ones(4))
print(repr(guard.patched()))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"


def test_aliased_output_sees_views_and_parameters():
    x = torch.randn(64, 64)
    weight = torch.nn.Parameter(torch.randn(8))
    assert aliased_output([x[3:5]], [x]) == "output 0 shares memory with input or parameter 0"
    assert (
        aliased_output([weight.detach()], [x, weight]) == "output 0 shares memory with input or parameter 1"
    )
    assert aliased_output([x.clone()], [x, weight]) is None


def test_mutated_inputs_compares_with_a_copy():
    x = torch.randn(10)
    before = [x.clone()]
    assert mutated_inputs(before, [x]) is None
    x[3] = 0.0
    assert mutated_inputs(before, [x]) == "forward changed input 0 in place"


def test_dtype_mismatch_flags_lower_precision_and_shape():
    ref = [torch.zeros(4, 4)]
    assert dtype_mismatch(ref, [torch.zeros(4, 4)]) is None
    assert "torch.float16" in dtype_mismatch(ref, [torch.zeros(4, 4, dtype=torch.float16)])
    assert "shape [16]" in dtype_mismatch(ref, [torch.zeros(16)])
    assert "2 result(s)" in dtype_mismatch(ref, [torch.zeros(4, 4)] * 2)


CHEATS_AND_WHY = [
    ("other_stream", "does not run on the current CUDA stream"),
    ("result_cache", "wrong result"),
    # On a GPU, PyTorch's caching allocator often gives the next trial's fresh input the address
    # of the last one, so the stale cached result already fails a correctness trial.
    ("pointer_cache", ("same input tensors, new values", "wrong result")),
    ("mutate_input", "changed input 0 in place"),
    ("alias_output", "shares memory with input"),
    ("half_precision", "wrong result"),
    ("half_output", "torch.float16"),
    ("patched_timer", "torch.cuda.Event.elapsed_time"),
    ("patched_allclose", "torch.allclose"),
]


def _cuda() -> bool:
    return torch.cuda.is_available()


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda(), reason="needs torch with a CUDA GPU")
@pytest.mark.parametrize("cheat, why", CHEATS_AND_WHY)
def test_eval_rejects_cheat(cheat, why):
    result = evaluate(str(TASKS / "relu_rand.py"), str(CHEATS / f"{cheat}.py"), trials=5)
    assert result["correct"] is False
    assert any(w in result["message"] for w in ((why,) if isinstance(why, str) else why)), result["message"]


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda(), reason="needs torch with a CUDA GPU")
def test_eval_accepts_the_honest_control():
    result = evaluate(str(TASKS / "relu_rand.py"), str(CHEATS / "honest_torch.py"), trials=10)
    assert result["correct"] is True, result["message"]
    assert result["time_new"]["trials"] == 10 and result["speedup_eager"] > 0


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda(), reason="needs torch with a CUDA GPU")
@pytest.mark.parametrize(
    "stem",
    [
        "relu_rand",
        "scaled_relu",
        "linear_gelu",
        "conv_relu_pool",
        "variance_rows",
        "attention",
        "norms_and_pools",
        "conv_windows",
        "conv_depthwise_pools",
        "scans_masks_einsum",
        "class_losses",
        "weighted_losses_same_pad",
        "lookups",
        "unfold_upsample",
        "constant_on_input_device",
    ],
)
def test_generated_model_new_passes_the_protocol(stem, translations):
    _, path = translations[stem]
    result = evaluate(str(TASKS / f"{stem}.py"), str(path), trials=10)
    assert result["correct"] is True, result["message"]
    assert result["weights_equal"] is True
