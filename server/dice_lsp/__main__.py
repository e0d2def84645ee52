"""`dice-lsp`: run the DICE language server on stdio."""
from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from .version import VERSION


def _protocol_streams() -> tuple[object, object]:
    """The protocol's own stdout, with fd 1 then pointed at stderr: a stray print in any
    library (or a child process inheriting fd 1) can then never corrupt the LSP stream."""
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return sys.stdin.buffer, protocol_out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dice-lsp", description="The DICE language server (stdio).")
    parser.add_argument("--log-file", type=Path, help="log file (default: $XDG_STATE_HOME/dice/dice-lsp.log)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug records too")
    parser.add_argument("--version", action="version", version=f"dice-lsp {VERSION}")
    args = parser.parse_args(argv)

    from .cleanup import install, own_temp_dir
    from .log import setup_file_logging
    from .app import create_server

    install(own_temp_dir())
    # Background threads (static pass, intent checks) run pure Python for up to seconds on big
    # files; hand the GIL over every millisecond (default 5) so the event loop keeps answering.
    sys.setswitchinterval(0.001)
    setup_file_logging(args.log_file, logging.DEBUG if args.verbose else logging.INFO)
    stdin, stdout = _protocol_streams()
    create_server().start_io(stdin, stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
