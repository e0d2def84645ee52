"""The server's version: the installed dice-cuda distribution's."""
from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("dice-cuda")
except PackageNotFoundError:   # running from a source checkout that was never installed
    VERSION = "0+unknown"
