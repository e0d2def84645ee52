"""Nothing of the server outlives it: every temporary file it or its workers make (nvcc's work
directories and `tmpxft_*` files included) lies in one directory of its own, and every nvcc
process group is stopped when the server ends: at shutdown/exit, on SIGTERM/SIGHUP, and, when
the server itself is killed, by its worker processes, which notice that their parent is gone."""
from __future__ import annotations

import atexit
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

from dice_engine.compile.processes import reap, stop_all

_PREFIX = "dice-lsp-"
_PARENT_POLL_S = 0.5


def own_temp_dir() -> Path:
    """A fresh directory for everything temporary, made the process's (and its children's) TMPDIR."""
    directory = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
    os.environ["TMPDIR"] = str(directory)
    tempfile.tempdir = None          # tempfile reads TMPDIR again on its next use
    return directory


def clean_up(directory: Path) -> None:
    """Stop every nvcc group of ours and remove the directory."""
    stop_all()
    if directory.is_dir():
        reap(directory)
        shutil.rmtree(directory, ignore_errors=True)


def install(directory: Path) -> None:
    """In the server: clean up at exit, and turn SIGTERM/SIGHUP into an orderly exit."""
    atexit.register(clean_up, directory)

    def on_signal(signum: int, _frame: object) -> None:
        clean_up(directory)
        os._exit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, on_signal)


def guard_worker() -> None:
    """In a worker process: on SIGTERM (the pool's terminate) stop this worker's nvcc and exit;
    when the server is gone (killed), clean up its directory and exit."""
    def on_term(signum: int, _frame: object) -> None:
        stop_all()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    parent = os.getppid()
    directory = Path(tempfile.gettempdir())

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL_S)
        print(f"dice-lsp worker {os.getpid()}: the server is gone, cleaning up", file=sys.stderr)
        if directory.name.startswith(_PREFIX):
            clean_up(directory)
        else:
            stop_all()
        os._exit(1)

    threading.Thread(target=watch, name="dice-parent-watch", daemon=True).start()
