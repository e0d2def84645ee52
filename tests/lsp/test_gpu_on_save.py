"""The GPU check on save: gated by dice.gpu.enabled, a no-op with one log line without a GPU,
and with one, sanitizer/profiler findings merged with the static ones and figures for hover.
CI has no GPU: the runner and the two tools below are fakes standing in for GpuRunner,
compute-sanitizer and Nsight Compute (the real ones are tested in tests/runner and tests/gpu)."""
from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace

import pytest
from pygls.workspace import TextDocument

import dice_engine.runner as runner_module
from dice_engine.analysis.findings import Finding
from dice_engine.intent import intent_hash, render_region
from dice_engine.runner import RunReport, regions
from dice_lsp.documents import Documents, Findings
from dice_lsp.kernel_info import check_lines
from dice_lsp.features.on_save import check_on_save, run_gpu_checks
from dice_lsp.settings import Settings
from dice_lsp.jobs import Debouncer, Workers

URI = "file:///work/k.cu"
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
SOURCE = f"// @dice: {INTENT}\n" + render_region(intent_hash(INTENT), "elementwise.fused", BODY)
ACCESS_LINE = 4          # `if (i < n) y[i] = ...` in the file (0-based)


class FakeRunner:
    """Stands in for GpuRunner: `available` as told, every region verified in 10 µs."""

    device = 0
    gpu = {"gpu": "Fake H200", "arch": "sm_90"}
    present = True

    def available(self) -> bool:
        return self.present

    def evaluate(self, rendered, problem, arch):
        return RunReport(verified=True, verdict="ok", detail="verified", time_us=10.0, gbps=800.0,
                         roofline_fraction=0.25, reference_time_us=15.0)


class FakeServer:
    """What the on-save GPU path touches of DiceServer: settings, documents, the open text,
    worker threads, the debouncer, the GPU gate's fields and publishDiagnostics."""

    def __init__(self, gpu_enabled: bool) -> None:
        self.settings = Settings(gpu_enabled=gpu_enabled)
        self.documents = Documents(self.settings.arch)
        self.workspace = SimpleNamespace(text_documents={URI: TextDocument(URI, SOURCE, version=1)})
        self.workspace.get_text_document = lambda uri: self.workspace.text_documents[uri]
        self.workers = Workers(threads=1)
        self.debouncer = Debouncer()
        self.gpu_probe: bool | None = None
        self.gpu_runner = None
        self.published: list = []

    def text_document_publish_diagnostics(self, params) -> None:
        self.published.append(params)


@pytest.fixture
def fake_gpu(monkeypatch):
    monkeypatch.setattr(runner_module, "GpuRunner", FakeRunner)

    def memcheck(rendered, problem, **kw):
        line = kw["first_line"] + 2      # the region's third line: the guarded access
        return [Finding(kw["path"], line, 0, line, 0, "overflow", "DICE-D001", "error",
                        "memcheck: Invalid __global__ write of size 4 bytes", source="sanitizer")]

    def ncu(rendered, problem, **kw):
        line = kw["first_line"]
        return [Finding(kw["path"], line, 0, line, 0, "performance", "DICE-D012", "information",
                        "measured `twice`: 9.8 µs", source="profiler")]

    monkeypatch.setattr(regions, "sanitize", memcheck)
    monkeypatch.setattr(regions, "profile", ncu)
    return FakeRunner


async def test_nothing_is_scheduled_unless_gpu_runs_are_enabled():
    server = FakeServer(gpu_enabled=False)
    assert check_on_save(server, URI) is False and server.gpu_probe is None
    enabled = FakeServer(gpu_enabled=True)
    enabled.gpu_probe, enabled.gpu_runner = False, None        # probed before: no GPU
    assert check_on_save(enabled, URI) is True
    await asyncio.sleep(0.2)
    assert enabled.published == []


async def test_without_a_gpu_the_check_is_a_no_op_with_one_log_line(fake_gpu, caplog):
    fake_gpu.present = False
    try:
        server = FakeServer(gpu_enabled=True)
        with caplog.at_level(logging.INFO, logger="dice_lsp.features.on_save"):
            await run_gpu_checks(server, URI)
    finally:
        fake_gpu.present = True
    said = [r for r in caplog.records if r.name == "dice_lsp.features.on_save"]
    assert len(said) == 1 and "no GPU runner" in said[0].getMessage()
    state = server.documents.get(URI)
    assert server.published == [] and state.dynamic.items == [] and state.checked == {}


async def test_dynamic_findings_merge_with_the_static_ones_and_figures_reach_hover(fake_gpu):
    server = FakeServer(gpu_enabled=True)
    state = server.documents.get(URI)
    static = Finding(state.path, ACCESS_LINE, 15, ACCESS_LINE, 19, "overflow", "DICE-O001", "warning",
                     "32-bit index", source="static")
    state.static = Findings(1, [static])
    await run_gpu_checks(server, URI)
    [params] = server.published
    by_code = {d.code: d for d in params.diagnostics}
    assert set(by_code) == {"DICE-O001", "DICE-D012"}      # D001 confirmed the static finding on its line
    assert "Confirmed at run time by compute-sanitizer" in by_code["DICE-O001"].message
    assert by_code["DICE-D012"].source == "dice.profiler" and by_code["DICE-D012"].range.start.line == 2
    figures = state.checked[intent_hash(INTENT)]
    hover = "\n".join(check_lines(figures))
    assert "10.00 µs on Fake H200 · 800 GB/s · 25% of roofline" in hover
    assert "reference (PyTorch) 15.00 µs (1.50× faster)" in hover
    assert "verified against the reference" in hover


async def test_results_for_a_version_the_document_left_are_dropped(fake_gpu, monkeypatch):
    server = FakeServer(gpu_enabled=True)
    real = regions.verify_file

    def edit_meanwhile(*args, **kwargs):
        server.workspace.text_documents[URI] = TextDocument(URI, SOURCE + "\n", version=2)
        return real(*args, **kwargs)

    monkeypatch.setattr("dice_lsp.features.on_save.verify_file", edit_meanwhile)
    await run_gpu_checks(server, URI)
    assert server.published == [] and server.documents.get(URI).checked == {}
