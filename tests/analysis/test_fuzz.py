"""No input crashes the analyses: random bytes, truncated and corrupted corpus files, token soup.
Each yields findings or nothing, never an exception."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dice_engine.analysis import Analyzer, Finding, check_source
from dice_engine.analysis.findings import CATEGORIES

CORPUS = sorted((Path(__file__).resolve().parents[1] / "corpus").glob("*.cu"))
SOURCES = [p.read_bytes() for p in CORPUS]
TOKENS = ["__global__", "__device__", "__shared__", "void", "float", "int", "size_t", "double",
          "__half", "struct", "for", "while", "do", "if", "else", "return", "break", "continue",
          "switch", "case", "threadIdx.x", "threadIdx.y", "blockIdx.x", "blockDim.x", "gridDim.x",
          "__syncthreads()", "__syncwarp", "__shfl_down_sync", "atomicAdd", "pow", "exp",
          "k", "s", "x", "i", "n", "tid", "[", "]", "(", ")", "{", "}", "<<<", ">>>", ";", ",", "=",
          "+=", "*", "/", "%", "<", ">", "<=", "&&", "||", "?", ":", "&", "->", ".", "0", "1", "32",
          "0.5", "1e-3f", "0xffffffff", "#define", "N", "\n", " ", "template", "<typename T>",
          "static_cast<float>", "reinterpret_cast<float4*>", "sizeof", "-", "++", "--", "~", "!"]

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class _Crashes(logging.Handler):
    """Collects the analyses' contained failures: the contract is no exception, the goal is none
    to contain."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


CRASHES = _Crashes()
logging.getLogger("dice_engine.analysis").addHandler(CRASHES)


@pytest.fixture(autouse=True)
def no_contained_crashes():
    CRASHES.records.clear()
    yield
    assert not CRASHES.records, [r.getMessage() + "\n" + (r.exc_text or "") for r in CRASHES.records][:3]


def _check(data: bytes | str) -> None:
    findings = check_source(data, "fuzz.cu")
    assert isinstance(findings, list)
    for f in findings:
        assert isinstance(f, Finding) and f.category in CATEGORIES
        assert 0 <= f.line <= f.end_line and f.column >= 0 and f.end_column >= 0
        assert "\x1f" not in f.message          # line references are rendered


@FUZZ
@given(st.binary(max_size=2000))
def test_random_bytes(data):
    _check(data)


@FUZZ
@given(st.sampled_from(SOURCES), st.floats(0, 1), st.binary(max_size=8))
def test_truncated_and_corrupted_corpus_files(source, cut, junk):
    at = int(len(source) * cut)
    _check(source[:at])
    _check(source[:at] + junk + source[at:])
    _check((source[:at] + junk).decode("utf-8", errors="surrogateescape"))


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=300))
def test_token_soup(tokens):
    soup = " ".join(tokens)
    _check(soup)
    _check("__global__ void k(float* x, int n) {\n" + soup + "\n}\n")


@FUZZ
@given(st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 40), st.text(max_size=20)), max_size=6))
def test_incremental_edits_never_raise(edits):
    text = SOURCES[0].decode() + SOURCES[-1].decode()
    analyzer = Analyzer("fuzz.cu")
    analyzer.update(text)
    for at, length, insert in edits:
        at = min(at, len(text))
        text = text[:at] + insert + text[at + length:]
        assert isinstance(analyzer.update(text), list)


def test_deep_nesting_and_huge_literals():
    _check("__global__ void k(int* x) { x[0] = " + "(" * 5000 + "1" + ")" * 5000 + "; }")
    nested_ifs = "if (threadIdx.x) { " * 300 + "__syncthreads();" + "}" * 300
    _check("__global__ void k(int* x) { " + nested_ifs + "}")
    _check("__global__ void k(int* x) { x[threadIdx.x << 99999999999] = 0xffffffffffffffffffffffff; }")
    _check("#define N 99999999999999999999999\n"
           "__global__ void k(float* x) { int i = N * N; x[i % 7] = 1; }")
