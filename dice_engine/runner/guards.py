"""Guards against kernels that game their checks, applied to every candidate (DICE's own too).

Models that write kernels have been caught doing the work on a side stream the timer does not
see, caching outputs across calls or keyed on pointers, writing into their inputs, computing in
lower precision than asked, and patching the timer. (A workspace allocated once and kept, as
DICE's own split reductions do, is not among them: the prompt asks models not to allocate, but
the guards refuse only what games a check.) Some of that shows in the source, and
`source_violations` refuses it before anything runs; the rest only shows at run time, where the
runner child checks it: inputs are compared after every trial, the launcher is synchronised on
the default stream only, a fresh trial is verified after the timed runs, and `timer_disagrees`
compares the event timer with the wall clock.
"""
from __future__ import annotations

import re

from ..ir.graph import Program

# (pattern, what it means) over code with comments and string literals blanked.
_FORBIDDEN: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(cudaStreamCreate\w*|cuStreamCreate\w*|cudaStreamPerThread|cudaStreamLegacy|"
                r"cudaStreamNonBlocking|cudaGraphLaunch|cudaLaunchHostFunc|cudaStreamAddCallback)\b"),
     "uses another stream than the one it is given ({0})"),
    (re.compile(r"\(\s*cudaStream_t\s*\)\s*(?:0x)?[1-9]\w*"), "launches on a hard-coded stream handle ({0})"),
    (re.compile(r"\b(cudaDeviceSynchronize|cudaStreamSynchronize|cudaEventSynchronize|cudaThreadSynchronize|"
                r"cudaMemcpy|cudaMemcpyToSymbol|cudaMemcpyFromSymbol|cudaMemset|cuCtxSynchronize)\s*\("),
     "synchronises with the host ({0})"),
    (re.compile(r"\b(cudaEvent\w*|cuEvent\w*|clock_gettime|gettimeofday|dlsym|dlopen|RTLD_NEXT|LD_PRELOAD|"
                r"std::chrono)\b"),
     "touches timers or symbol lookup ({0})"),
    (re.compile(r"__attribute__\s*\(\(\s*(constructor|destructor)"),
     "runs code when the library is loaded ({0})"),
    (re.compile(r"\b(std::thread|pthread_create|fork|popen|system)\s*[(<]"),
     "starts threads or processes ({0})"),
]
# A definition of a CUDA runtime/driver function (`cudaEventElapsedTime(...) {`) replaces the timer.
_API_DEFINITION = re.compile(r"[\w:]+[\s*&]+(cuda[A-Z]\w*|cu[A-Z]\w*)\s*\([^;{}()]*\)\s*(?:noexcept\s*)?\{")
_LAUNCH = re.compile(r"<<<(.*?)>>>", re.DOTALL)
_LOW_PRECISION = re.compile(r"\b(__half2?|__nv_bfloat162?|__float2half\w*|__float2bfloat16\w*|"
                            r"__floats2half2_rn|nv_bfloat16|wmma::precision::tf32|__float_to_tf32|"
                            r"tf32|f16\.f16|bf16\.bf16|__hadd|__hmul|__hfma)\b")
_BLANK = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL)


def _code_only(source: str) -> str:
    """`source` with comments and string/char literals blanked (lengths kept)."""
    return _BLANK.sub(lambda m: " " * len(m.group(0)), source)


def _split_top(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    parts.append("".join(current).strip())
    return parts


def source_violations(source: str, program: Program | None = None, stream: str = "stream") -> list[str]:
    """What the source does that no honest kernel for `program` needs, one line each (empty: none).

    `stream` is the launcher's stream parameter: every launch must use it. `program` tells which
    precision was asked: without any f16/bf16 tensor, half-precision arithmetic is refused (and
    TF32 too, unless the intent opted in with precision=tf32)."""
    code = _code_only(source)
    found: list[str] = []
    for pattern, meaning in _FORBIDDEN:
        names = sorted({m.group(1) if m.groups() else m.group(0) for m in pattern.finditer(code)})
        if names:
            found.append(meaning.format(", ".join(n.strip() for n in names)))
    defined = sorted({m.group(1) for m in _API_DEFINITION.finditer(code)})
    if defined:
        found.append(f"defines CUDA API functions ({', '.join(defined)}), which would replace the real ones")
    for launch in _LAUNCH.finditer(code):
        config = _split_top(launch.group(1))
        if len(config) < 4:
            found.append(f"launches <<<{', '.join(config)}>>> on the default stream instead of `{stream}`")
        elif config[3] != stream:
            found.append(f"launches on stream `{config[3]}` instead of `{stream}`")
    if program is not None and _asks_full_precision(program):
        low = sorted({m.group(1) for m in _LOW_PRECISION.finditer(code)})
        if program.options.get("precision") == "tf32":   # opted in: TF32 rounding, nothing lower
            low = [name for name in low if "tf32" not in name]
        if low:
            found.append(f"computes in lower precision than the f32/f64 tensors ask ({', '.join(low)})")
    return found


def _asks_full_precision(program: Program) -> bool:
    dtypes = [d.dtype for d in program.inputs.values()] + [n.dtype for n in program.output.walk()]
    return not any(d.is_low_precision for d in dtypes) and any(d.is_float for d in dtypes)


# The event timer may read a little less than back-to-back wall time per call (no launch gaps, no
# L2 flush) but never several times less: that means the timer is not timing the work.
WALL_SLACK_US = 50.0


def timer_disagrees(event_us: float, wall_us_per_call: float) -> str | None:
    """Why the event-timed median cannot be right given the wall clock, or None."""
    if wall_us_per_call > 2.0 * event_us + WALL_SLACK_US:
        return (f"the timer says {event_us:.1f} us per call but back-to-back calls take "
                f"{wall_us_per_call:.1f} us each by the wall clock")
    return None
