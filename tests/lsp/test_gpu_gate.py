"""Trust: without dice.gpu.enabled the server never creates a GPU runner (nothing is executed)."""
from __future__ import annotations

import sys
from types import SimpleNamespace

from dice_lsp.settings import Settings
from dice_lsp.gpu import gpu_runner


def test_no_runner_and_no_probe_unless_gpu_runs_are_enabled(monkeypatch):
    monkeypatch.delitem(sys.modules, "dice_engine.runner", raising=False)
    server = SimpleNamespace(settings=Settings(gpu_enabled=False), gpu_probe=None, gpu_runner=None)
    assert gpu_runner(server) is None
    assert server.gpu_probe is None and "dice_engine.runner" not in sys.modules


def test_an_enabled_setting_probes_once_and_keeps_the_answer(monkeypatch):
    import dice_engine.runner as runner_module

    made = []

    class FakeRunner:
        def __init__(self) -> None:
            made.append(self)

        def available(self) -> bool:
            return False

    monkeypatch.setattr(runner_module, "GpuRunner", FakeRunner)
    server = SimpleNamespace(settings=Settings(gpu_enabled=True), gpu_probe=None, gpu_runner=None)
    assert gpu_runner(server) is None and gpu_runner(server) is None
    assert server.gpu_probe is False and len(made) == 1
