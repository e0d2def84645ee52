"""The one gate to GPU execution: a runner exists only when the user set dice.gpu.enabled
(the VS Code client ties that to Workspace Trust) and a device answers. Opening or editing a
file never runs anything from it."""
from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import DiceServer

log = logging.getLogger(__name__)
_lock = threading.Lock()


def gpu_runner(server: "DiceServer") -> Any | None:
    """The shared GpuRunner, or None. Blocks while probing the first time: call off the loop."""
    if not server.settings.gpu_enabled:
        return None
    with _lock:
        if server.gpu_probe is None:
            try:
                from dice_engine.runner import GpuRunner
                runner = GpuRunner()
                server.gpu_probe = bool(runner.available())
                server.gpu_runner = runner if server.gpu_probe else None
            except Exception as exc:   # a broken driver must not take the editor down
                log.warning("GPU probe failed: %s", exc)
                server.gpu_probe, server.gpu_runner = False, None
            log.info("GPU runs enabled; device %s", "available" if server.gpu_probe else "not available")
        return server.gpu_runner
