"""Framing between the runner and its child processes: an 8-byte length, then a pickle.

The parent reads replies with a deadline (select on the pipe), so a child that hangs, dies or
writes garbage becomes an exception here, never a blocked parent.
"""
from __future__ import annotations

import os
import pickle
import select
import struct
import time
from dataclasses import dataclass
from typing import Any, BinaryIO

from ..ir.patterns import Problem

_HEADER = struct.Struct("<Q")
MAX_MESSAGE = 1 << 30


class ChildGone(Exception):
    """The child closed its end (it exited or crashed)."""


class BadReply(Exception):
    """The child wrote something that is not a framed pickle."""


def write_message(stream: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def read_message(stream: BinaryIO) -> Any:
    """Blocking read, used by the child on its request pipe."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise ChildGone("request pipe closed")
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise ChildGone("request pipe closed mid-message")
    return pickle.loads(data)


def _read_exact(fd: int, size: int, deadline: float) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        wait = deadline - time.monotonic()
        if wait <= 0:
            raise TimeoutError
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            raise TimeoutError
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise ChildGone("reply pipe closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_reply(fd: int, timeout: float) -> Any:
    """One framed reply from `fd` within `timeout` seconds (TimeoutError, ChildGone, BadReply)."""
    deadline = time.monotonic() + timeout
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    if size > MAX_MESSAGE:
        raise BadReply(f"reply claims {size} bytes")
    data = _read_exact(fd, size, deadline)
    try:
        return pickle.loads(data)
    except Exception as exc:   # any unpickling failure means the stream is garbage
        raise BadReply(f"reply is not a pickle ({type(exc).__name__})") from exc


@dataclass
class RunRequest:
    """Run one compiled candidate: verify at every binding in `shapes`, then time at the first."""
    library: str                          # the shared library holding the launcher
    symbol: str                           # the launcher's exported name
    roles: list[str]                      # "input" | "output" | "symbol" per launcher parameter
    names: list[str]                      # the launcher parameters' names (inputs, output, symbols)
    problem: Problem
    shapes: list[dict[str, int]]
    trials: int = 5
    seed: int = 0
    time: bool = True
    runs: int = 50
    guards: bool = True                   # canary zones around buffers (off under compute-sanitizer)
    reference: bool = True                # with `time`: also time PyTorch's reference (when importable)
