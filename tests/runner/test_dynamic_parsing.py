"""compute-sanitizer and Nsight Compute output → findings, on reports recorded on the H200
(tests/runner/data: probe.cu and what the tools printed for it, 2026-12-02)."""
from __future__ import annotations

import re
from pathlib import Path

from dice_engine.runner.profiler import metric_rows, parse_metrics, parse_source_page
from dice_engine.runner.profiler import to_findings as profiler_findings
from dice_engine.runner.sanitizer import parse_records
from dice_engine.runner.sanitizer import to_findings as sanitizer_findings

DATA = Path(__file__).with_name("data")


def sanitizer_report(tool: str) -> str:
    text = (DATA / "sanitizer_probe.txt").read_text()
    return re.split(rf"=== compute-sanitizer --tool {tool} .*\n", text)[1].split("=== compute-sanitizer")[0]


def as_is(file: str, line: int) -> tuple[str, int]:
    return file, line - 1


def test_memcheck_out_of_bounds_write_at_its_line():
    (finding,) = sanitizer_findings(parse_records(sanitizer_report("memcheck"), "memcheck"), as_is)
    assert (finding.code, finding.category, finding.severity, finding.source) == \
        ("DICE-D001", "overflow", "error", "sanitizer")
    assert (finding.file, finding.line) == ("probe.cu", 6)          # line 7, 1-based: y[i] = 1.0f
    assert "Invalid __global__ write of size 4 bytes" in finding.message
    assert "1 bytes after the nearest allocation" in finding.message
    # the API error that follows the fault is a consequence, not a second finding


def test_racecheck_names_both_accesses():
    (finding,) = sanitizer_findings(parse_records(sanitizer_report("racecheck"), "racecheck"), as_is)
    assert (finding.code, finding.category, finding.line) == ("DICE-D002", "race", 11)
    assert "Write access at line 12" in finding.message and "Read access at line 13" in finding.message


def test_repeated_reports_become_one_finding_with_a_count():
    (sync,) = sanitizer_findings(parse_records(sanitizer_report("synccheck"), "synccheck"), as_is)
    assert (sync.code, sync.category, sync.line) == ("DICE-D003", "sync", 17)
    assert sync.data["count"] == 2 and "(2 reports)" in sync.message
    (init,) = sanitizer_findings(parse_records(sanitizer_report("initcheck"), "initcheck"), as_is)
    assert (init.code, init.line) == ("DICE-D004", 22)


def test_locations_outside_the_code_under_test_are_dropped():
    records = parse_records(sanitizer_report("memcheck"), "memcheck")
    assert sanitizer_findings(records, lambda file, line: None) == []
    mapped = sanitizer_findings(records, lambda file, line: ("kernel.cu", 100 + line))
    assert [(f.file, f.line) for f in mapped] == [("kernel.cu", 107)]


def test_ncu_metrics_with_thousands_separators():
    metrics = parse_metrics((DATA / "ncu_metrics.csv").read_text())
    strided = metrics["strided(const float *, float *, int)"]
    assert strided["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 131072
    assert strided["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 4096
    assert metrics["bank(float *)"]["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 1984


# `--section` output in the shape ncu 2025.3 printed on an H100 (2026-12-07; rebuilt from that run's
# output, cut to two rows): the header has rule columns, a metric row stops after its value, a rule
# row has no metric; the profiled program's own stdout lands in between.
SECTIONS_CSV = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
    '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name",'
    '"Rule Type","Rule Description","Estimated Speedup Type","Estimated Speedup"\n'
    '"0","1943","python3.12","127.0.0.1","gemm(const float *)","1","7","(256, 1, 1)","(16, 32, 1)","0",'
    '"9.0","GPU Speed Of Light Throughput","Duration","nsecond","3,303,872",\n'
    '{"case": "kb1_square"}\n'
    '"0","1943","python3.12","127.0.0.1","gemm(const float *)","1","7","(256, 1, 1)","(16, 32, 1)","0",'
    '"9.0","Occupancy","","","","TheoreticalOccupancy","OPT","limited by registers","local","87.5"\n'
)


def test_section_output_rows_shorter_than_the_header_are_read():
    assert parse_metrics(SECTIONS_CSV) == {"gemm(const float *)": {"Duration": 3303872}}
    assert list(metric_rows(SECTIONS_CSV))[0] == ("gemm(const float *)", "Duration", "nsecond", "3,303,872")


def test_strided_line_is_an_uncoalesced_finding_and_the_kernel_gets_a_summary():
    metrics = parse_metrics((DATA / "ncu_metrics.csv").read_text())
    lines = parse_source_page((DATA / "ncu_source.csv").read_text())
    assert {sl.line for sl in lines} == {26, 27, 28, 29}
    findings = profiler_findings(metrics, lines, lambda file, line: ("probe.cu", line - 1)
                                 if file.endswith("probe.cu") else None)
    by_code = {f.code: f for f in findings}
    assert by_code["DICE-D010"].line == 27 and by_code["DICE-D010"].category == "coalescing"
    assert "4.5× the sectors" in by_code["DICE-D010"].message
    summary = by_code["DICE-D012"]
    assert summary.line == 25 and summary.source == "profiler"
    assert "global loads 32.0 sectors/request" in summary.message
    assert "achieved occupancy 33.3%" in summary.message


def test_kernel_names_match_across_the_metrics_table_and_the_source_page():
    from dice_engine.runner.profiler import SourceLine

    metrics = {"dice_relu::kernel(const float *, float *, long long)": {"gpu__time_duration.sum": 2000.0}}
    lines = [SourceLine("/tmp/region.cu", "kernel(const float *, float *, long long)", 12, {})]
    (summary,) = profiler_findings(metrics, lines, lambda file, line: ("k.cu", line - 1))
    assert (summary.code, summary.line) == ("DICE-D012", 11)
    assert summary.message == "measured `kernel`: 2.0 µs"


def test_racecheck_on_a_large_fixed_grid_is_skipped_and_says_so():
    from dice_engine.intent import parse_intent
    from dice_engine.ir.patterns import classify
    from dice_engine.runner import sanitize
    from dice_engine.sketches.base import Launch, RenderedKernel, launcher_params

    problem = classify(parse_intent("y = relu(x); x: f32[4096, 4096]"))
    kernel = RenderedKernel("s", {}, "", [], "k_launch", launcher_params(problem),
                            [Launch("k", (4096, 1, 1), (256, 1, 1), 0)], "")
    (finding,) = sanitize(kernel, problem, tools=("racecheck",), path="a.cu", first_line=3)
    assert (finding.code, finding.category, finding.severity, finding.line) == \
        ("DICE-D005", "race", "information", 3)
    assert "4096 blocks" in finding.message
