"""`inductor_warm` (the KernelBench run's torch.compile warm-up) compiles a task file's Model on
the GPU and leaves Inductor's FX-graph cache filled where the timed run will look it up; a task
that does not load is one error line, and the next task still warms. Skips without a GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

pytestmark = pytest.mark.gpu

TASK = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.relu(x * self.scale).sum(dim=1)


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return [0.5]
"""


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs torch with a CUDA GPU")
def test_warm_up_fills_the_fx_graph_cache(tmp_path) -> None:
    task, broken = tmp_path / "1_relu_sum.py", tmp_path / "2_broken.py"
    task.write_text(TASK)
    broken.write_text("raise ValueError('no such task')\n")
    cache = tmp_path / "inductor"
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache))
    command = [sys.executable, "-m", "dice_engine.kernelbench.inductor_warm", str(broken), str(task)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["task"] for line in lines] == [str(broken), str(task)]
    assert "ValueError: no such task" in lines[0]["error"]
    assert lines[1]["seconds"] > 0
    assert any((cache / "fxgraph").rglob("*")), sorted(p.name for p in cache.iterdir())
