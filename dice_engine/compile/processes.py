"""nvcc as a process group that can always be stopped whole.

nvcc runs cicc, ptxas and the host compiler as its own children; killing nvcc alone leaves them
running. So nvcc leads a process group of its own, with TMPDIR pointed at its work directory (its
`tmpxft_*` files then go away with that directory), and the group id is kept in two places: in
this process (`stop_all`, for a shutdown) and in a `.pgid` file in the work directory, so that a
process that outlives a killed owner can still stop it (`reap`)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable

PGID_FILE = ".pgid"
_POLL_S = 0.05
_running: dict[int, Path] = {}          # process group id -> work directory
_lock = threading.Lock()


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_group(cmd: list[str], cwd: Path, timeout: float,
              cancel: Callable[[], bool] | None = None) -> tuple[int | None, str, str | None]:
    """Run `cmd` in `cwd` as a new process group; returns (exit status or None when stopped,
    combined output, why it was stopped: "timeout", "cancelled" or None)."""
    env = dict(os.environ, TMPDIR=str(cwd), TMP=str(cwd), TEMP=str(cwd))
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            encoding="utf-8", errors="replace", start_new_session=True, env=env)
    marker = cwd / PGID_FILE
    with _lock:
        _running[proc.pid] = cwd
    try:
        # written whole, then renamed: a reader (reap) never sees the marker empty
        staged = cwd / (PGID_FILE + ".tmp")
        staged.write_text(str(proc.pid))
        os.replace(staged, marker)
        deadline = time.monotonic() + timeout
        while True:
            try:
                out, _ = proc.communicate(timeout=_POLL_S)
                return proc.returncode, out, None
            except subprocess.TimeoutExpired:
                why = ("timeout" if time.monotonic() >= deadline
                       else "cancelled" if cancel is not None and cancel() else None)
                if why is not None:
                    _kill_group(proc.pid)
                    out, _ = proc.communicate()
                    return None, out or "", why
    finally:
        if proc.returncode is None:      # an exception (or a signal handler) got us here
            _kill_group(proc.pid)
            proc.wait()
        with _lock:
            _running.pop(proc.pid, None)
        marker.unlink(missing_ok=True)


def stop_all() -> None:
    """Kill every nvcc group this process started that is still running (shutdown). Takes no
    lock: it runs in signal handlers, possibly on a thread that holds `_lock` already (a copy
    of the dict's keys is atomic under the GIL)."""
    for pgid in list(_running):
        _kill_group(pgid)


def reap(directory: Path) -> None:
    """Kill the nvcc groups whose work directories lie in `directory` (recorded in their `.pgid`
    files) and remove those directories: for a process whose owner was killed."""
    for marker in directory.glob(f"*/{PGID_FILE}"):
        try:
            pgid = int(marker.read_text().strip())
        except (OSError, ValueError):
            continue
        if pgid > 1:
            _kill_group(pgid)
    for entry in directory.glob("dice-nvcc-*"):
        shutil.rmtree(entry, ignore_errors=True)
