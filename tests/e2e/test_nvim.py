"""Neovim (headless, 0.7+) with editors/nvim: diagnostics arrive, the generate action streams the
kernel into the buffer, hover answers. Skipped when `nvim` is not installed."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from dice_engine.intent import find_intents

from .editor import REPO, environment, needs_nvcc
from .test_lsp import INTENT, STATIC_FILE

NVIM = shutil.which("nvim")
SOURCE = STATIC_FILE + "\n" + INTENT + "\n"
INTENT_LINE = SOURCE.splitlines().index(INTENT)


@needs_nvcc
# CI installs Debian's neovim (scripts/test.sh), so there a missing nvim is a failure, not a skip.
@pytest.mark.skipif(NVIM is None and not os.environ.get("CI"),
                    reason="nvim is not installed (apt-get install -y neovim)")
def test_neovim_gets_diagnostics_a_streamed_kernel_and_a_hover(tmp_path):
    cu = tmp_path / "scale.cu"
    cu.write_text(SOURCE, encoding="utf-8")
    out = tmp_path / "out.json"
    env = environment() | {
        "DICE_NVIM_RTP": str(REPO / "editors" / "nvim"),
        "DICE_LSP_CMD": json.dumps([sys.executable, "-m", "dice_lsp",
                                    "--log-file", str(tmp_path / "lsp.log")]),
        "DICE_FILE": str(cu), "DICE_OUT": str(out), "DICE_INTENT_LINE": str(INTENT_LINE),
        "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    driver = REPO / "tests" / "e2e" / "nvim_driver.lua"
    proc = subprocess.run([NVIM, "--headless", "--clean", "-c", f"luafile {driver}"], env=env,
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.exists(), proc.stderr
    result = json.loads(out.read_text())
    assert "lua_error" not in result, result["lua_error"]
    assert result["filetype"] == "cuda"
    assert result["got_diagnostics"] and any(d["code"] == "DICE-P001" for d in result["diagnostics"])
    assert result["generate_finished"] and result["generate_error"] is None, result
    (site,) = find_intents(result["text"] + "\n")
    assert site.region is not None and not site.region.stale and not site.region.edited
    assert result["text"].startswith(STATIC_FILE.rstrip("\n"))
    assert "DICE" in result["hover"] and "__global__" in result["text"]
