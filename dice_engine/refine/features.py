"""What the learned denoiser knows of a problem and its target: a fixed-length vector of numbers.

The problem part: its pattern, dtypes, sizes as log2 (the output, the largest input, the
anchor's row or reduced extent, a GEMM/conv's batch, M, N, K), alignment of the innermost
dimension, how much elementwise work is fused, and whether an operand is transposed. The target
part: the arch table's figures (SMs, shared memory, L2, bandwidth, peak rates, ...). Every value
is scaled to about [0, 1]. `FEATURE_NAMES` is stored with trained weights: weights trained on
another list of features are not used.
"""
from __future__ import annotations

import math

import numpy as np

from ..arch import ArchSpec
from ..ir.graph import Node, Program
from ..ir.patterns import Problem
from ..ir.work import work

PATTERNS = ("elementwise", "reduction", "softmax", "norm", "scan", "transpose", "gemm", "conv2d", "pool",
            "program")
DTYPES = ("f32", "f16", "bf16", "f64", "int", "bool")
_SIZE_FEATURES = ("log2_out_numel", "log2_max_input_numel", "log2_dram_bytes", "log2_flops",
                  "out_rank", "inputs", "out_last", "out_second_last", "out_leading",
                  "in_last", "in_second_last", "in_leading", "anchor_row", "anchor_reduced",
                  "gemm", "gemm_batch", "gemm_m", "gemm_n", "gemm_k",
                  "align4", "align8", "align128", "elementwise_ops", "transposed")
_ARCH_FEATURES = ("sms", "smem_per_sm", "smem_per_block", "l2", "dram_gbps", "fp32_tflops",
                  "tc_tflops", "threads_per_sm", "blocks_per_sm", "sm_number")
FEATURE_NAMES: tuple[str, ...] = (tuple(f"pattern_{p}" for p in PATTERNS) + tuple(f"out_{d}" for d in DTYPES)
                                  + tuple(f"in_{d}" for d in DTYPES) + _SIZE_FEATURES + _ARCH_FEATURES)


def _log2(x: float, scale: float) -> float:
    return math.log2(max(1.0, x)) / scale


def _dtype_slot(name: str, kind: str) -> str:
    return name if name in DTYPES else ("bool" if kind == "bool" else "int" if kind == "int" else "f32")


def _dims(program: Program, node: Node) -> tuple[int, ...]:
    return program.concrete_shape(node.shape)


def _last_three(shape: tuple[int, ...]) -> list[float]:
    """log2 of the last, second-last and the product of the leading dimensions."""
    last = shape[-1] if shape else 1
    second = shape[-2] if len(shape) >= 2 else 1
    leading = math.prod(shape[:-2]) if len(shape) > 2 else 1
    return [_log2(last, 24), _log2(second, 24), _log2(leading, 24)]


def _anchor_extents(program: Program, anchor: Node | None) -> list[float]:
    """log2 of the anchor input's row (innermost dimension) and of what it reduces (input
    elements per output element; 1 for row-wise operators that keep the shape)."""
    if anchor is None or not anchor.args:
        return [0.0, 0.0]
    source = _dims(program, anchor.args[0])
    out = max(1, math.prod(_dims(program, anchor)))
    return [_log2(source[-1] if source else 1, 24), _log2(math.prod(source) / out, 24)]


def _problem_part(problem: Problem) -> list[float]:
    program = problem.program
    nodes = list(program.output.walk())
    inputs = [n for n in nodes if n.op == "input"]
    largest = max(inputs, key=lambda n: math.prod(_dims(program, n)), default=program.output)
    first = inputs[0] if inputs else program.output
    w = work(problem)
    out_shape, in_shape = _dims(program, program.output), _dims(program, largest)
    pattern = [1.0 if problem.pattern == p else 0.0 for p in PATTERNS]
    out_dtype = _dtype_slot(program.output.dtype.name, program.output.dtype.kind)
    in_dtype = _dtype_slot(first.dtype.name, first.dtype.kind)
    dtypes = [float(out_dtype == d) for d in DTYPES] + [float(in_dtype == d) for d in DTYPES]
    g = w.gemm
    gemm = ([1.0, _log2(g.batch, 16), _log2(g.m, 16), _log2(g.n, 16), _log2(g.k, 16)] if g is not None
            else [0.0] * 5)
    inner = in_shape[-1] if in_shape else 1
    heavy_or_leaf = {"input", "const"}
    elementwise_ops = sum(1 for n in nodes if n.op not in heavy_or_leaf and n is not problem.anchor)
    sizes = [_log2(math.prod(out_shape), 32), _log2(math.prod(in_shape), 32), _log2(w.dram_bytes, 40),
             _log2(w.flops, 50), len(out_shape) / 6, len(program.inputs) / 8,
             *_last_three(out_shape), *_last_three(in_shape), *_anchor_extents(program, problem.anchor),
             *gemm, float(inner % 4 == 0), float(inner % 8 == 0), float(inner % 128 == 0),
             min(elementwise_ops, 16) / 16, float(any(n.op == "permute" for n in nodes))]
    return pattern + dtypes + sizes


def _arch_part(arch: ArchSpec) -> list[float]:
    return [arch.sms / 160, arch.smem_per_sm / 262144, arch.smem_per_block_optin / 262144,
            _log2(arch.l2_bytes, 32), arch.dram_gbps / 8000, arch.fp32_tflops / 100,
            arch.fp16_tc_tflops / 2500, arch.max_threads_per_sm / 2048, arch.max_blocks_per_sm / 32,
            arch.sm_number / 120]


def problem_features(problem: Problem, arch: ArchSpec) -> np.ndarray:
    """The vector of `FEATURE_NAMES` for `problem` on `arch` (float32)."""
    values = _problem_part(problem) + _arch_part(arch)
    assert len(values) == len(FEATURE_NAMES)
    return np.asarray(values, dtype=np.float32)
