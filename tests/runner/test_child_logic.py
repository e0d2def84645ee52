"""The runner child's verification path on the CPU: a host-memory stand-in for pycuda
(fake_cuda.py; there is no GPU in CI) and a C library playing the candidate kernels."""
from __future__ import annotations

import subprocess

import pytest
from fake_cuda import install

from dice_engine.ir import ops
from dice_engine.ir.dtypes import F32
from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.patterns import classify
from dice_engine.runner.checks import checks_for
from dice_engine.runner.child import Child
from dice_engine.runner.device import DeviceSession
from dice_engine.runner.protocol import RunRequest

CANDIDATES = r"""
static int pending_error = 0;
int dice_runner_last_error(void) { int e = pending_error; pending_error = 0; return e; }
int dice_runner_synchronize(void) { return 0; }
const char* dice_runner_error_string(int code) { return code == 9 ? "invalid configuration argument" : "?"; }
#define LAUNCHER(name) void name##_launch(const float* x, float* y, long long n, void* stream)
LAUNCHER(good) { for (long long i = 0; i < n; ++i) y[i] = x[i] + 1.0f; }
LAUNCHER(wrong) { for (long long i = 0; i < n; ++i) y[i] = x[i] + 1.001f; }
LAUNCHER(half) { for (long long i = 0; i < n; i += 2) y[i] = x[i] + 1.0f; }
LAUNCHER(overrun) { for (long long i = 0; i <= n; ++i) y[i] = 1.0f; }
LAUNCHER(config) { pending_error = 9; }
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("fake_kernels")
    (folder / "k.c").write_text(CANDIDATES)
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(folder / "k.so"), str(folder / "k.c")],
                   check=True)
    return str(folder / "k.so")


def _child(monkeypatch, where: str) -> Child:
    install(monkeypatch)
    events: list[str] = []
    session = DeviceSession(0)
    made = Child(session, events.append, checks_for(session, where))
    made.events = events
    return made


@pytest.fixture
def child(monkeypatch):
    """Host checks: numpy inputs and reference, as in a child without torch with CUDA."""
    return _child(monkeypatch, "host")


@pytest.fixture(params=["host", "cpu"])
def any_child(monkeypatch, request):
    """Both ways of checking; "cpu" runs the device checks (torch draws, torch reference, torch
    comparison over the buffers' own bytes) with CPU torch over the stand-in's host memory."""
    return _child(monkeypatch, request.param)


def request(library: str, symbol: str, n: int = 1001, **kw) -> RunRequest:
    x = ops.input_tensor("x", F32, ("N",))
    y = ops.make("add", [x, ops.const(1.0)])
    program = Program({"x": TensorDecl("x", F32, ("N",))}, "y", y, {"N": n})
    return RunRequest(library=library, symbol=symbol, roles=["input", "output", "symbol"],
                      names=["x", "y", "N"], problem=classify(program), shapes=[{"N": n}, {"N": n // 2 | 1}],
                      seed=7, runs=3, **kw)


def test_a_correct_candidate_is_verified_at_both_shapes_and_timed(any_child, library):
    child = any_child
    reply = child.handle(request(library, "good_launch"))
    assert reply["verdict"] == "ok", reply
    assert reply["max_rel_err"] == 0.0
    assert reply["time_us"] == pytest.approx(10.0)   # the fake events report 10 µs
    assert "5 trials at 2 shape(s)" in reply["detail"]
    assert child.events[:2] == ["kernel", "host"]    # the parent's kernel timeout covers launches only


@pytest.mark.parametrize("symbol, verdict, words", [
    ("wrong_launch", "mismatch", "exceeds 1e-05"),
    ("half_launch", "unwritten", "500 of 1001 output elements were not written"),
    ("overrun_launch", "out-of-bounds", "wrote out of bounds of 'y' (0 bytes past the end)"),
    ("config_launch", "launch-failure", "CUDA error 9: invalid configuration argument (at launch"),
])
def test_each_failure_gets_its_own_verdict(any_child, library, symbol, verdict, words):
    reply = any_child.handle(request(library, symbol, time=False))
    assert reply["verdict"] == verdict
    assert words in reply["detail"]


def test_a_huge_allocation_is_out_of_memory_not_a_crash(any_child, library):
    reply = any_child.handle(request(library, "good_launch", n=1 << 40))
    assert reply["verdict"] == "out-of-memory"


def test_fresh_inputs_per_trial_are_shared_across_candidates(child, library):
    child.handle(request(library, "good_launch", time=False))
    cached = len(child.checks.trials._entries)
    child.handle(request(library, "good_launch", time=False))
    assert cached == 10 and len(child.checks.trials._entries) == cached   # 5 trials × 2 shapes, reused


def test_without_torch_on_a_gpu_there_is_no_reference_time(child, library):
    """CI's torch has no CUDA: the child reports no reference time rather than an estimate."""
    reply = child.handle(request(library, "good_launch"))
    assert reply["verdict"] == "ok" and reply["reference_time_us"] is None


def test_the_reference_is_timed_once_per_program_and_shape_at_the_timed_shape(child, library, monkeypatch):
    timed: list[dict[str, int]] = []

    def measure(program, bindings, runs, seed):
        timed.append(bindings)
        return 42.0

    monkeypatch.setattr(child.reference, "usable", lambda: True)
    monkeypatch.setattr(child.reference, "_measure", measure)
    first = child.handle(request(library, "good_launch"))
    again = child.handle(request(library, "good_launch"))
    assert first["reference_time_us"] == again["reference_time_us"] == 42.0
    assert timed == [{"N": 1001}]
    assert child.handle(request(library, "good_launch", reference=False))["reference_time_us"] is None
    assert child.handle(request(library, "good_launch", time=False))["reference_time_us"] is None


def test_the_child_reports_seconds_per_stage(any_child, library):
    any_child.handle(request(library, "good_launch"))
    stages = any_child.take_stages()
    assert {"inputs", "reference", "launch", "check", "runs"} <= set(stages)
    assert all(seconds >= 0 for seconds in stages.values())
    assert any_child.take_stages() == {}          # each call hands over what came since the last


def test_device_checks_draw_the_same_inputs_for_every_candidate(monkeypatch, library):
    child = _child(monkeypatch, "cpu")
    seen: list[list[float]] = []
    original = child.checks.prepare

    def prepare(trial: int) -> None:
        original(trial)
        seen.append(child.checks.views["x"][:4].tolist())

    monkeypatch.setattr(child.checks, "prepare", prepare)
    child.handle(request(library, "good_launch", time=False))
    child.handle(request(library, "good_launch", time=False))
    assert len(seen) == 20 and seen[:10] == seen[10:]          # 5 trials × 2 shapes, twice
    assert len({tuple(s) for s in seen[:5]}) == 5              # fresh inputs per trial


def test_device_checks_keep_references_for_the_next_candidates(monkeypatch, library):
    from dice_engine.runner import device_reference

    child = _child(monkeypatch, "cpu")
    calls: list[int] = []
    real = device_reference.evaluate
    monkeypatch.setattr(device_reference, "evaluate", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert child.handle(request(library, "good_launch", time=False))["verdict"] == "ok"
    assert len(calls) == 10                                    # 5 trials × 2 shapes
    assert child.handle(request(library, "wrong_launch", time=False))["verdict"] == "mismatch"
    assert child.handle(request(library, "good_launch", time=False))["verdict"] == "ok"
    assert len(calls) == 10                                    # the same draws: kept references
    child.checks.release()
    assert child.handle(request(library, "good_launch", time=False))["verdict"] == "ok"
    assert len(calls) == 20


def test_buffers_that_do_not_fit_first_make_the_checks_give_back_memory(monkeypatch, library):
    import fake_cuda

    child = _child(monkeypatch, "cpu")
    released: list[bool] = []
    real_release = child.checks.release
    monkeypatch.setattr(child.checks, "release", lambda: released.append(True) or real_release())
    failures = iter([True])
    real_alloc = fake_cuda.mem_alloc

    def alloc(size):
        if next(failures, False):
            raise fake_cuda.MemoryError("cuMemAlloc failed: out of memory")
        return real_alloc(size)

    monkeypatch.setattr(fake_cuda, "mem_alloc", alloc)
    assert child.handle(request(library, "good_launch", time=False))["verdict"] == "ok"
    assert released == [True]


def test_the_kept_references_never_evict_the_trials_of_the_problem_being_checked(monkeypatch, library):
    from dice_engine.runner import device_reference

    child = _child(monkeypatch, "cpu")
    one = 1001 * 4                                 # one trial's reference at the first shape
    child.checks.cache_budget = 3 * one + 100      # room for three of its five trials
    calls: list[int] = []
    real = device_reference.evaluate
    monkeypatch.setattr(device_reference, "evaluate", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = request(library, "good_launch", time=False)
    first.shapes = first.shapes[:1]
    for _ in range(3):
        assert child.handle(first)["verdict"] == "ok"
    assert len(calls) == 5 + 2 + 2                 # trials 0-2 kept, 3-4 made each time
    other = request(library, "good_launch", n=999, time=False)
    other.shapes = other.shapes[:1]
    assert child.handle(other)["verdict"] == "ok"
    assert {k[1] for k in child.checks._cache} == {(("N", 999),)}   # another problem's room is taken


def test_device_memory_that_runs_out_in_the_checks_is_an_out_of_memory_verdict(monkeypatch, library):
    from dice_engine.runner import device_compare

    child = _child(monkeypatch, "cpu")
    monkeypatch.setattr(child.checks.torch.cuda, "OutOfMemoryError", MemoryError, raising=False)
    attempts: list[int] = []

    def exhausted(*args, **kwargs):
        attempts.append(1)
        raise MemoryError("CUDA out of memory. Tried to allocate 6.00 GiB")

    monkeypatch.setattr(device_compare, "compare_on_device", exhausted)
    reply = child.handle(request(library, "good_launch", time=False))
    assert reply["verdict"] == "out-of-memory" and len(attempts) == 2
    assert "ran out of device memory" in reply["detail"] and "6.00 GiB" in reply["detail"]


def test_device_checks_see_the_sessions_buffers_in_place(monkeypatch):
    install(monkeypatch)
    session = DeviceSession(0)
    assert checks_for(session, "cpu").sees(session)
