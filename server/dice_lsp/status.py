"""`dice/status` notifications for the VS Code status bar: target arch, whether GPU runs are
on and a device answers, and the running generation's progress line (null when idle)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .server import DiceServer

METHOD = "dice/status"


def send(server: "DiceServer", progress: str | None = None) -> None:
    gpu = bool(server.settings.gpu_enabled and server.gpu_probe)
    server.protocol.notify(METHOD, {"arch": server.settings.arch, "gpu": gpu, "progress": progress})
