"""Guards against kernels that game their checks (runner/guards.py).

Static: the test kernels of tests/llm/kernels that cheat in their source are refused, the honest
ones and every kernel DICE's own sketches render for the intent suite are not. Dynamic: the
runner child's checks, on the CPU with the host-memory stand-in for pycuda (fake_cuda.py, as in
test_child_logic.py: there is no GPU here) and C functions playing the cheating launchers; the
same cheats as CUDA kernels run on a real GPU in tests/gpu/test_llm_gpu.py."""
from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pytest
from fake_cuda import install

from dice_engine.arch import resolve
from dice_engine.intent import default_kernel_name, parse_intent
from dice_engine.ir import ops
from dice_engine.ir.dtypes import F32
from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.patterns import classify
from dice_engine.runner.child import Child
from dice_engine.runner.device import DeviceSession
from dice_engine.runner.guards import source_violations, timer_disagrees
from dice_engine.runner.protocol import RunRequest
from dice_engine.sketches.registry import candidates

KERNELS = Path(__file__).parents[1] / "llm" / "kernels"
SUITE = Path(__file__).parents[1] / "data" / "intent_suite.txt"
TOPK = parse_intent("y = torch.topk(x, 4, dim=1).values; x: f32[256, 512]")


@pytest.mark.parametrize("name,words", [
    ("cheat_side_stream", "uses another stream than the one it is given (cudaStreamCreateWithFlags"),
    ("cheat_half_precision", "lower precision than the f32/f64 tensors ask (__float2half, __half)"),
    ("cheat_patched_timer", "defines CUDA API functions (cuEventElapsedTime)"),
])
def test_cheats_visible_in_the_source_are_refused(name, words):
    found = source_violations((KERNELS / f"{name}.cu").read_text(), TOPK)
    assert any(words in line for line in found), found


@pytest.mark.parametrize("name", ["topk_good", "topk_simple", "topk_wrong", "cheat_pointer_cache",
                                  "cheat_count_cache", "cheat_mutates_input"])
def test_source_that_hides_nothing_passes_the_static_guards(name):
    """Wrong answers and run-time cheats are the dynamic checks' business."""
    assert source_violations((KERNELS / f"{name}.cu").read_text(), TOPK) == []


def test_launches_must_use_the_given_stream_and_comments_do_not_count():
    launch = 'extern "C" void k_launch(float* y, cudaStream_t stream) { k<<<1, 32%s>>>(y); }'
    assert "on the default stream" in source_violations(launch % "")[0]
    assert source_violations(launch % ", 0, stream") == []
    commented = "// cudaStreamCreate(&s); cudaDeviceSynchronize();\n" + launch % ", 0, stream"
    assert source_violations(commented) == []
    synced = launch % ", 0, stream" + "\nvoid f() { cudaDeviceSynchronize(); }"
    assert source_violations(synced) == ["synchronises with the host (cudaDeviceSynchronize)"]


def test_low_precision_is_allowed_where_the_intent_asks_for_it():
    half = parse_intent("y = relu(x); x: f16[1024]")
    assert source_violations("__global__ void k(const __half* x) { __half v = x[0]; }", half) == []


def test_tf32_passes_only_where_the_intent_opts_in():
    plain = parse_intent("C = A @ B; A: f32[256, 256]; B: f32[256, 256]")
    tf32 = parse_intent("C = A @ B; A: f32[256, 256]; B: f32[256, 256]; precision=tf32")
    rounding = "__global__ void k() { wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32> a; }"
    halving = "__global__ void k(const float* x) { __half v = __float2half(x[0]); }"
    assert source_violations(rounding, plain) == [
        "computes in lower precision than the f32/f64 tensors ask (wmma::precision::tf32)"]
    assert source_violations(rounding, tf32) == []
    assert source_violations(halving, tf32) != []
    problem = classify(tf32)
    hopper = resolve("sm_90")
    sketch = next(s for s in candidates(problem, hopper) if s.name == "gemm.tf32_mma")
    source = sketch.render(problem, hopper, sketch.default_point(problem, hopper), "k").source
    assert source_violations(source, tf32) == []


def test_every_kernel_dices_own_sketches_render_passes():
    rendered = 0
    for line in SUITE.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        program = parse_intent(line, default_shape=(1024, 1024))
        problem = classify(program)
        for arch in ("sm_80", "sm_90"):
            spec = resolve(arch)
            for sketch in candidates(problem, spec):
                points = [sketch.default_point(problem, spec),
                          *itertools.islice(sketch.space(problem, spec).points(), 0, 200, 50)]
                for point in points:
                    source = sketch.render(problem, spec, point, default_kernel_name(program)).source
                    assert source_violations(source, program) == [], (sketch.name, line)
                    rendered += 1
    assert rendered > 300


def test_the_timer_must_agree_with_the_wall_clock():
    assert timer_disagrees(100.0, 120.0) is None          # back-to-back calls, no flush: close
    assert timer_disagrees(2.0, 30.0) is None             # launch overhead of a tiny kernel
    assert "the timer says 1.0 us per call" in timer_disagrees(1.0, 400.0)


# --- the runner child's dynamic guards --------------------------------------------------------

LAUNCHERS = r"""
#include <unistd.h>
int dice_runner_last_error(void) { return 0; }
int dice_runner_synchronize(void) { return 0; }
const char* dice_runner_error_string(int code) { return "?"; }
#define LAUNCHER(name) void name##_launch(const float* x, float* y, long long n, void* stream)
LAUNCHER(good) { for (long long i = 0; i < n; ++i) y[i] = x[i] + 1.0f; }
LAUNCHER(mutates) { for (long long i = 0; i < n; ++i) y[i] = x[i] + 1.0f; ((float*)x)[n - 1] = 0.0f; }
LAUNCHER(counts) {
    static int calls = 0;
    if (++calls > 5) return;
    for (long long i = 0; i < n; ++i) y[i] = x[i] + 1.0f;
}
LAUNCHER(pointers) {
    static const float* last_x = 0; static float* last_y = 0;
    if (x == last_x && y == last_y) return;
    last_x = x; last_y = y;
    for (long long i = 0; i < n; ++i) y[i] = x[i] + 1.0f;
}
LAUNCHER(slow) { usleep(400); for (long long i = 0; i < n; ++i) y[i] = x[i] + 1.0f; }
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("cheats")
    (folder / "k.c").write_text(LAUNCHERS)
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(folder / "k.so"), str(folder / "k.c")],
                   check=True)
    return str(folder / "k.so")


@pytest.fixture
def child(monkeypatch):
    install(monkeypatch)
    return Child(DeviceSession(0), lambda _event: None)


def request(library: str, symbol: str) -> RunRequest:
    x = ops.input_tensor("x", F32, ("N",))
    program = Program({"x": TensorDecl("x", F32, ("N",))}, "y", ops.make("add", [x, ops.const(1.0)]),
                      {"N": 1001})
    return RunRequest(library=library, symbol=symbol, roles=["input", "output", "symbol"],
                      names=["x", "y", "N"], problem=classify(program), shapes=[{"N": 1001}], seed=3, runs=5)


@pytest.mark.parametrize("symbol,verdict,words", [
    ("mutates", "guard", "wrote into the input 'x', trial 1"),
    ("counts", "guard", "correct while verified, wrong after the timed runs"),
    ("pointers", "unwritten", "trial 2"),
    ("slow", "guard", "the timer says 10.0 us per call but back-to-back calls take"),
])
def test_run_time_cheats_are_caught(child, library, symbol, verdict, words):
    reply = child.handle(request(library, f"{symbol}_launch"))
    assert reply["verdict"] == verdict and words in reply["detail"], reply


def test_an_honest_launcher_passes_every_guard(child, library):
    reply = child.handle(request(library, "good_launch"))
    assert reply["verdict"] == "ok" and reply["time_us"] == pytest.approx(10.0)
