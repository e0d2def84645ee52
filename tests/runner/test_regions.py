"""`verify_file`: a file's generated regions run as they stand. CI has no GPU, so the runner
here is a fake that records what it was asked to run and answers like GpuRunner would; the
real thing is exercised by the `gpu` test at the end."""
from __future__ import annotations

import shutil

import pytest

from dice_engine.analysis.findings import Finding
from dice_engine.api import verify_file
from dice_engine.intent import intent_hash, render_region
from dice_engine.runner import RunReport, regions

INTENT = "y = x * 2; x: f32[N]; N=1000"
BODY = """\
__global__ void twice(const float* x, float* y, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 2.0f;
}
extern "C" void twice_launch(const float* x, float* y, long long N, cudaStream_t stream) {
    twice<<<(unsigned)((N + 255) / 256), 256, 0, stream>>>(x, y, N);
}
"""


def document(intent: str = INTENT, body: str = BODY, recorded: str | None = None) -> str:
    region = render_region(recorded or intent_hash(intent), "elementwise.fused threads=256", body)
    return f"#include <cstdio>\n// @dice: {intent}\n{region}int main() {{ return 0; }}\n"


class FakeRunner:
    """Answers like GpuRunner; `verdict` is what every run reports."""

    device = 0
    gpu = {"gpu": "Fake H200", "arch": "sm_90"}

    def __init__(self, available: bool = True, verdict: str = "ok") -> None:
        self._available, self.verdict = available, verdict
        self.runs: list[tuple] = []

    def available(self) -> bool:
        return self._available

    def evaluate(self, rendered, problem, arch):
        self.runs.append((rendered, problem, arch))
        ok = self.verdict == "ok"
        return RunReport(verified=ok, verdict=self.verdict, detail="fake", time_us=10.0 if ok else None,
                         gbps=800.0 if ok else None, roofline_fraction=0.25 if ok else None,
                         reference_time_us=12.0 if ok else None)


def test_without_a_runner_or_a_gpu_nothing_runs():
    assert verify_file(document(), "k.cu", "sm_90", None) == []
    idle = FakeRunner(available=False)
    assert verify_file(document(), "k.cu", "sm_90", idle) == [] and idle.runs == []


def test_the_region_text_itself_runs_with_the_launcher_abi_of_its_intent():
    runner = FakeRunner()
    [check] = verify_file(document(), "k.cu", "sm_80", runner)
    rendered, problem, arch = runner.runs[0]
    assert rendered.source == BODY and rendered.launcher == "twice_launch" and arch == "sm_90"
    assert [(p.name, p.role) for p in rendered.params] == [("x", "input"), ("y", "output"), ("N", "symbol")]
    assert problem.program.symbols == {"N": 1000} and rendered.compile_arch("sm_90") == "sm_90"
    assert check.status == "verified" and check.line == 1 and check.intent_hash == intent_hash(INTENT)
    assert check.figures() == {"gpu": "Fake H200", "status": "verified", "message": "ok: fake",
                                    "verified": True, "verdict": "ok", "time_us": 10.0, "gbps": 800.0,
                                    "tflops": None, "roofline_fraction": 0.25, "reference_time_us": 12.0}


def test_a_region_using_wgmma_is_built_for_the_arch_specific_target():
    runner = FakeRunner()
    verify_file(document(body=BODY.replace("{\n", '{\n    asm volatile("wgmma.fence.sync.aligned;");\n', 1)),
                "k.cu", "sm_90", runner)
    assert runner.runs[0][0].compile_arch("sm_90") == "sm_90a"


@pytest.mark.parametrize("source, words", [
    (document(recorded="0123456789ab"), "generated for a different intent"),
    (document(body=BODY.replace("long long N, cudaStream_t", "cudaStream_t")),
     "takes 3 parameters; the intent needs 4"),
    (document(body=BODY.replace('extern "C" ', "")), 'no extern "C" void <name>_launch'),
    (document(intent="y = frobnicate(x); x: f32[N]; N=10"), "cannot be served"),
])
def test_regions_that_cannot_be_run_are_skipped_and_say_why(source, words):
    runner = FakeRunner()
    [check] = verify_file(source, "k.cu", "sm_90", runner)
    assert check.status == "skipped" and words in check.message and runner.runs == []


def test_sanitizer_and_profiler_run_only_when_asked_and_only_on_a_verified_region(monkeypatch):
    calls: list[tuple[str, dict]] = []

    def tool(name: str, code: str):
        def run(rendered, problem, **kw):
            calls.append((name, kw))
            return [Finding(kw["path"], kw["first_line"] + 1, 0, kw["first_line"] + 1, 0, "overflow", code,
                            "error", "fake", source="sanitizer" if name == "sanitize" else "profiler")]
        return run

    monkeypatch.setattr(regions, "sanitize", tool("sanitize", "DICE-D001"))
    monkeypatch.setattr(regions, "profile", tool("profile", "DICE-D012"))
    [plain] = verify_file(document(), "k.cu", "sm_90", FakeRunner())
    assert plain.findings == [] and calls == []
    [checked] = verify_file(document(), "k.cu", "sm_90", FakeRunner(), checks=("sanitize", "profile"),
                            timeout_s=30)
    assert [f.code for f in checked.findings] == ["DICE-D001", "DICE-D012"]
    assert all(kw["first_line"] == 3 and kw["path"] == "k.cu" and kw["timeout_s"] == 30 for _, kw in calls)
    assert calls[0][1]["tools"] == ("memcheck", "synccheck", "initcheck")
    calls.clear()
    [failed] = verify_file(document(), "k.cu", "sm_90", FakeRunner(verdict="mismatch"), checks=("sanitize",))
    assert failed.status == "failed" and failed.message.startswith("mismatch") and calls == []
    with pytest.raises(ValueError, match="unknown checks"):
        verify_file(document(), "k.cu", "sm_90", FakeRunner(), checks=("racecheck",))


@pytest.mark.gpu
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA toolkit) not installed")
def test_on_a_gpu_a_correct_region_verifies_and_an_out_of_bounds_one_is_found():
    from dice_engine.runner import GpuRunner

    with GpuRunner() as runner:
        if not runner.available():
            pytest.skip("no GPU")
        [good] = verify_file(document(), "k.cu", "sm_90", runner, checks=("sanitize",))
        assert good.status == "verified" and good.run.time_us > 0 and good.findings == []
        overrun = document(body=BODY.replace("if (i < n) ", "if (i <= n) "))
        [bad] = verify_file(overrun, "k.cu", "sm_90", runner)
        assert bad.status == "failed" and bad.run.verdict in ("out-of-bounds", "fault")
