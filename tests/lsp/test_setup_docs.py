"""Issue 18, point 7: the setup a new user follows works and tells where to look. The install
commands in the editor READMEs install from the checkout (DICE is on no package index), the
log location they give is the one the server writes (the Neovim plugin's: tests/e2e/test_nvim.py).
(`dice check --help`, `dice doctor`'s hints and the CLI's progress are tested in tests/test_cli.py;
the log's generation lines in tests/e2e/test_lsp.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dice_lsp.log import default_log_file

REPO = Path(__file__).resolve().parents[2]
READMES = ["editors/nvim/README.md", "server/README.md", "vscode-client/README.md", "README.md"]


@pytest.mark.parametrize("readme", READMES)
def test_every_pip_install_installs_from_the_checkout(readme):
    text = (REPO / readme).read_text(encoding="utf-8")
    installs = re.findall(r"pip install [^\n`]*", text)
    for install in installs:
        assert re.search(r"-e ['\"]?\.", install), f"{readme}: {install!r} needs a package index"
    assert "pip install dice-cuda" not in text


@pytest.mark.parametrize("readme", ["editors/nvim/README.md", "server/README.md"])
def test_the_log_location_in_the_docs_is_where_the_server_writes(readme, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", "/state")
    assert default_log_file() == Path("/state/dice/dice-lsp.log")
    monkeypatch.delenv("XDG_STATE_HOME")
    assert default_log_file() == Path.home() / ".local/state/dice/dice-lsp.log"
    text = " ".join((REPO / readme).read_text(encoding="utf-8").split())
    assert "$XDG_STATE_HOME/dice/dice-lsp.log" in text and "~/.local/state/dice/dice-lsp.log" in text
    assert "--log-file" in text
