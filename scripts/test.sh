#!/usr/bin/env bash
# The whole test suite from a fresh checkout: Python (unit, CLI, LSP and headless-Neovim end-to-end;
# GPU tests skip without a GPU) and the VS Code client (unit + protocol tests, then the .vsix).
set -euo pipefail
cd "$(dirname "$0")/.."

# The Neovim end-to-end test needs Debian's neovim.
if ! command -v nvim >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq && apt-get install -y -qq neovim >/dev/null
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q -e '.[dev]'
.venv/bin/python -m pytest -q

cd vscode-client
npm ci --no-audit --no-fund
DICE_PYTHON="$PWD/../.venv/bin/python" npm test
npm run -s package
# The package holds the bundled client and its docs, never node_modules.
python3 - <<'PY'
import zipfile
names = zipfile.ZipFile("dice-cuda.vsix").namelist()
print("dice-cuda.vsix:", ", ".join(names))
assert "extension/dist/extension.js" in names, "the bundled client is missing"
assert not any("node_modules" in n for n in names), "node_modules leaked into the package"
PY
