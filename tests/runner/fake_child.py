"""A FAKE runner child for the isolation tests: there is no GPU in CI, so this process speaks the
runner's protocol and misbehaves on demand. The behaviour comes from the requested library's
file name: ok.so, hang.so (announces a kernel, then never answers), crash.so (dies), garbage.so
(writes bytes that are not a framed pickle), lost.so (reports a lost context and exits),
slow_host.so (1.5 s of host work, no kernel announced). FAKE_HELLO=nogpu makes the hello say
there is no GPU; FAKE_HELLO=silent never says hello."""
from __future__ import annotations

import os
import sys
import time

from dice_engine.runner.protocol import ChildGone, read_message, write_message


def main() -> int:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    hello = os.environ.get("FAKE_HELLO", "ok")
    if hello == "silent":
        time.sleep(600)
    write_message(replies, {"ok": hello == "ok", "gpu": "Fake GPU", "arch": "sm_90", "driver": "0.0",
                            **({"error": "no CUDA device"} if hello != "ok" else {})})
    while True:
        try:
            request = read_message(sys.stdin.buffer)
        except ChildGone:
            return 0
        if request == "ping":
            write_message(replies, {"verdict": "ok", "busy_s": 0.0})
            continue
        if request == "ceilings":
            write_message(replies, {"verdict": "ok", "busy_s": 0.0, "ceilings": {
                "gpu": "Fake GPU", "copy_gbps": 1000.0, "gemm_tflops": {"f32": 10.0}}})
            continue
        kind = os.path.basename(request.library).removesuffix(".so")
        if kind == "hang":
            write_message(replies, {"event": "kernel"})
            time.sleep(600)
        if kind == "crash":
            os._exit(3)
        if kind == "garbage":
            replies.write(b"\x10\x00\x00\x00\x00\x00\x00\x00this is no pickle")
            replies.flush()
            continue
        if kind == "slow_host":
            time.sleep(1.5)
        reply = {"verdict": "ok", "detail": f"pid {os.getpid()}", "max_rel_err": 0.0, "time_us": 100.0,
                 "busy_s": 0.001}
        if kind == "lost":
            reply = {"verdict": "fault", "detail": "illegal address", "context_lost": True, "busy_s": 0.0}
        write_message(replies, reply)
        if kind == "lost":
            return 0


if __name__ == "__main__":
    sys.exit(main())
