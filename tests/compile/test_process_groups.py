"""nvcc is stopped whole (cicc, ptxas) on a timeout or a cancellation, and leaves no temporary
file behind: its tmpxft files go to its own work directory, removed with it."""
from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

import pytest

from dice_engine.compile import compile_cuda, nvcc_found
from dice_engine.compile.processes import PGID_FILE, reap, run_group



needs_nvcc = pytest.mark.skipif(not nvcc_found(), reason="nvcc (CUDA toolkit) not found")
SLOW = "\n".join(f"__global__ void k{i}(float* x) {{ float a = x[threadIdx.x]; for (int t = 0; t < 64; t++) "
                 f"a = a * 1.0001f + {i}.0f; x[threadIdx.x] = a; }}" for i in range(3000))


@pytest.fixture
def own_tmp(tmp_path, monkeypatch) -> Path:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", None)
    return temp


def _group_alive(pgid: int) -> bool:
    """Whether any process of group `pgid` is left after a moment (killed children are reaped
    by init shortly after SIGKILL; until then they still count)."""
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.05)
    return True


@needs_nvcc
def test_a_timeout_stops_nvcc_and_its_children_and_leaves_no_files(own_tmp):
    groups: list[int] = []
    watcher = threading.Thread(target=lambda: groups.extend(_watch_pgid(own_tmp)), daemon=True)
    watcher.start()
    result = compile_cuda(SLOW, "sm_90", timeout=2.0, cache=False)
    assert not result.ok and "did not finish within 2 s" in result.first_error()
    watcher.join(5)
    assert groups and not any(_group_alive(g) for g in groups)
    assert list(own_tmp.iterdir()) == []          # no dice-nvcc-* directory, no tmpxft_* file


@needs_nvcc
def test_cancel_stops_a_running_compile_within_a_poll(own_tmp):
    began = time.monotonic()
    result = compile_cuda(SLOW, "sm_90", cache=False, cancel=lambda: time.monotonic() - began > 1.0)
    assert not result.ok and "cancelled" in result.first_error()
    assert time.monotonic() - began < 3.0
    assert list(own_tmp.iterdir()) == []


def test_reap_stops_recorded_groups_and_removes_their_directories(tmp_path):
    work = tmp_path / "dice-nvcc-abc"
    work.mkdir()
    stopped: list = []
    done = threading.Event()

    def sleeper() -> None:
        stopped.append(run_group(["sleep", "30"], work, timeout=60))
        done.set()

    threading.Thread(target=sleeper, daemon=True).start()
    deadline = time.monotonic() + 5
    while not (work / PGID_FILE).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    pgid = int((work / PGID_FILE).read_text())
    reap(tmp_path)                     # what a worker does when the server was killed
    assert done.wait(5) and (stopped[0][0] is None or stopped[0][0] < 0)
    assert not _group_alive(pgid) and not work.exists()


def _watch_pgid(directory: Path) -> list[int]:
    """The process groups recorded under `directory` while a compile runs (for 10 s at most)."""
    seen: set[int] = set()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for marker in directory.glob(f"*/{PGID_FILE}"):
            try:
                seen.add(int(marker.read_text()))
            except (OSError, ValueError):
                pass
        if seen and not list(directory.glob(f"*/{PGID_FILE}")):
            break
        time.sleep(0.05)
    return sorted(seen)
