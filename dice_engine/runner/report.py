"""What one GPU evaluation of a candidate kernel found: the verdict and the measurements."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# "ok" is the only verdict that means verified. The agreed interface names ok, mismatch,
# unwritten, timeout, crash, launch-failure, compile-error and no-gpu; out-of-bounds (a guard
# zone around a buffer was overwritten), fault (an asynchronous device error such as an illegal
# address) and out-of-memory are finer kinds of failure that callers may treat as "not verified".
# guard: the kernel games a check (another stream, cached outputs, written inputs, lower precision,
# a patched timer; runner/guards.py), refused before it runs or caught while it runs.
VERDICTS = ("ok", "mismatch", "unwritten", "out-of-bounds", "fault", "timeout", "crash",
            "launch-failure", "out-of-memory", "compile-error", "no-gpu", "guard")


@dataclass
class RunReport:
    verified: bool | None                  # None: nothing ran (no GPU)
    verdict: str
    detail: str = ""
    max_rel_err: float | None = None
    time_us: float | None = None           # median over the timed runs, at the intent's shapes
    gbps: float | None = None              # minimum bytes moved / time
    tflops: float | None = None            # useful floating-point work / time (GEMM, conv)
    roofline_fraction: float | None = None # lower bound from the measured ceilings / time
    reference_time_us: float | None = None # PyTorch eager, timed the same way in the same child
    shapes: list[dict[str, int]] = field(default_factory=list)   # symbol bindings checked
    overhead_ms: float | None = None       # request wall time minus the child's own work

    def __post_init__(self) -> None:
        assert self.verdict in VERDICTS, self.verdict

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def failed(verdict: str, detail: str) -> RunReport:
    return RunReport(verified=None if verdict == "no-gpu" else False, verdict=verdict, detail=detail)
