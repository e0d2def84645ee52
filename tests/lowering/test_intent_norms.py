"""The intent language's batch, instance and group norm (and layer norm over several axes, which
the general lowering expands) take their mean and variance from one `moments` node: one pass
over the input for both statistics, then one normalize kernel that also applies the affine and
what follows. The one-kernel normalisation (`fuse=block`) stays where it served before."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from dice_engine.api import CUDAGenerator
from dice_engine.arch import ARCHS
from dice_engine.compile import compile_cuda, nvcc_found
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.lowering import GeneralLowering
from dice_engine.lowering.plan import fused_plan, make_plan

sys.path.insert(0, str(Path(__file__).parents[1] / "sketches"))
from cpu_emulation import assert_matches_reference, needs_emulator, random_inputs  # noqa: E402
from test_lowering_emulated import ALLOCATOR  # noqa: E402

NORMS = [
    "y = batch_norm(x, None, None, training=True); x: f32[4, 3, 5, 2]",
    "y = relu(batch_norm(x, w, b, training=True, eps=1e-3)) * 2.0; x: f32[6, 5, 7]; w, b: f32[5]",
    "y = batch_norm(x, w, b, training=True); x: f32[40, 6]; w, b: f32[6]",   # BatchNorm1d: per column
    "y = instance_norm(x, weight=w, bias=b); x: f32[2, 3, 5, 4]; w, b: f32[3]",
    "y = group_norm(x, 2, w, b); x: f32[2, 6, 3, 4]; w: f32[6]; b: f32[6]",
    "y = layer_norm(x, [4, 6], w, b) + 1.0; x: f32[3, 4, 6]; w: f32[4, 6]; b: f32[4, 6]",
]


class Emulated(GeneralLowering):
    def render(self, *args):
        rendered = super().render(*args)
        return dataclasses.replace(rendered, source=ALLOCATOR + rendered.source)


def _point(slices: int) -> dict:
    return {"threads": 64, "strategy": "block", "items": 4, "unroll": 1, "fuse": "kernels", "tile": 0,
            "slices": slices}


@pytest.mark.parametrize("intent", NORMS)
def test_one_statistics_stage_then_one_normalize_stage(intent: str) -> None:
    """Before, a mean stage, a variance stage (each a pass over x), then the map."""
    plan = make_plan(parse_intent(intent).output)
    assert [s.combine for s in plan.stages] == ["welford", None]
    assert plan.stages[0].node.op == "moments"


@pytest.mark.parametrize("intent", [NORMS[0], NORMS[3], NORMS[5]])
def test_the_one_kernel_normalisation_stays(intent: str) -> None:
    """Groups the fused kernel served before (statistics over the same axes, the output in the
    argument's shape) keep it: the moments become the two in-cache reductions it computes."""
    problem = classify(parse_intent(intent))
    assert GeneralLowering().space(problem, ARCHS["sm_90"]).token("fuse").choices == ("kernels", "block")
    assert [s.node.op for s in fused_plan(problem.program.output).stages[:-1]] == ["mean", "mean"]


@needs_emulator
@pytest.mark.parametrize("slices", [1, 4])
@pytest.mark.parametrize("intent", NORMS)
def test_statistics_and_normalize_kernels_match_float64(intent: str, slices: int, tmp_path) -> None:
    """Inputs offset by 50 (spread about 1), so the mean is far from 0: E[x²] − E[x]² in float32
    would lose digits of the variance. (Much larger offsets move the float32 mean itself by more
    than the comparison's tolerance once divided by the spread, in PyTorch as here.)"""
    problem = classify(parse_intent(intent))
    rendered = Emulated().render(problem, ARCHS["sm_90"], _point(slices), "n")
    assert len(rendered.kernel_names) == (2 if slices == 1 else 3)   # slices > 1: a merge kernel
    inputs = random_inputs(problem, {})
    inputs["x"] = (inputs["x"] + 50.0).astype(np.float32)
    assert_matches_reference(Emulated(), problem, _point(slices), tmp_path, inputs=inputs)


@pytest.mark.slow
@pytest.mark.parametrize("intent", [
    "y = relu(batch_norm(x, w, b, training=True)); x: f32[32, 64, 56, 56]; w, b: f32[64]",
    "y = group_norm(x, 8, w, b); x: f32[16, 64, 64, 64]; w, b: f32[64]",
])
def test_generate_reads_the_input_once_for_its_statistics(intent: str) -> None:
    """`dice generate` (no GPU: the cost model ranks) picks a moments kernel and a normalize
    kernel; before it picked a mean kernel, a variance kernel and a normalize kernel (3)."""
    result = CUDAGenerator("sm_90", budget=24, seed=0).generate(intent)
    assert result.sketch == "generic.lowered"
    header = result.source.splitlines()[0]        # "... N kernel(s): moments/moments, mul/split"
    stages = [s.split("/")[0] for s in header.split(": ")[-1].split(", ")]
    assert stages[0] == "moments" and len(stages) == 2, header
    merge = "slices=1" not in result.source.splitlines()[1]   # several slices add a merge kernel
    assert result.kernel.count("__global__") == 2 + merge, header
    if nvcc_found():
        compiled = compile_cuda(result.source, "sm_90")
        assert compiled.ok, "\n".join(str(m) for m in compiled.messages)[:3000]


@pytest.mark.parametrize("intent", [
    "y = layer_norm(x, [768], weight=w, bias=b); x: f16[B, 768]; w: f16[768]; b: f16[768]",
    "y = batch_norm(x, None, None, training=True); x: f32[N, 3, 5, 2]",
])
def test_symbolic_sizes_keep_two_reductions(intent: str) -> None:
    """The moments' halves need a reshape, which needs concrete sizes: with a symbol the norm
    is the mean and then the mean of squared deviations, as before (and still one kernel)."""
    problem = classify(parse_intent(intent))
    plan = make_plan(problem.program.output)
    assert [s.node.op for s in plan.stages[:-1]] == ["mean", "mean"]
    assert "block" in GeneralLowering().space(problem, ARCHS["sm_90"]).token("fuse").choices


@pytest.mark.parametrize("intent", NORMS)
def test_the_pytorch_baseline_and_the_device_reference_agree(intent: str) -> None:
    """What the runner times PyTorch with (torch_program) and checks candidates against on the GPU
    (device_reference, here on CPU torch) mean the same as the float64 evaluator."""
    import torch

    from dice_engine.ir import reference
    from dice_engine.runner import device_reference
    from dice_engine.runner.torch_program import torch_function

    program = parse_intent(intent)
    inputs = random_inputs(classify(program), {})
    want = reference.evaluate(program, inputs, {})
    tensors = {k: torch.from_numpy(v) for k, v in inputs.items()}
    baseline = torch_function(program)(tensors).double().numpy()
    np.testing.assert_allclose(baseline, want, rtol=1e-4, atol=1e-5)
    wide = device_reference.evaluate(program, tensors).double().numpy()   # float64, rounded to f32 once
    np.testing.assert_allclose(wide, want, rtol=2e-7, atol=1e-7)


@pytest.mark.parametrize("intent, fuse", [
    ("y = instance_norm(x); x: f32[112, 64, 512, 512]", "kernels"),   # 1 MiB groups: not in L1
    ("y = instance_norm(x); x: f32[16, 64, 32, 32]", "block"),        # 4 KiB groups
])
def test_the_default_point_fuses_only_groups_that_stay_in_l1(intent: str, fuse: str) -> None:
    """A group past L1 is re-read from DRAM by each pass of the one-kernel form; the moments
    kernel reads it once, so the search starts there."""
    problem = classify(parse_intent(intent))
    assert GeneralLowering().default_point(problem, ARCHS["sm_90"])["fuse"] == fuse


RMS_CHANNELS = "y = x / sqrt(mean(x * x, dim=1, keepdim=True) + 1e-5); x: f32[112, 64, 512, 512]"


@pytest.mark.parametrize("intent, choices", [
    (RMS_CHANNELS, ("kernels", "block", "thread")),
    ("y = x / sum(abs(x), dim=1, keepdim=True); x: f32[64, 4096]", ("kernels", "block")),   # rows
    ("y = x - max(x, dim=0, keepdim=True); x: f32[8192, 16]", ("kernels", "block")),       # too long
])
def test_a_thread_per_group_where_the_contiguous_axis_is_kept_and_groups_are_short(intent, choices) -> None:
    problem = classify(parse_intent(intent))
    assert GeneralLowering().space(problem, ARCHS["sm_90"]).token("fuse").choices == choices


def test_rms_over_channels_gets_a_thread_per_column_holding_it_in_registers() -> None:
    """64 channels a column: each thread loads its column into registers once, so the one kernel
    reads x once where a statistics kernel and a map read it twice (KernelBench level 1's 36).
    Measured on an H100 before the registers: re-read per pass, 256 threads' columns did not stay
    in cache (8.0 ms at 84% of DRAM bandwidth: three passes of 7.5 GB)."""
    problem = classify(parse_intent(RMS_CHANNELS))
    assert GeneralLowering().default_point(problem, ARCHS["sm_90"])["fuse"] == "thread"
    result = CUDAGenerator(arch="sm_90", budget=4).generate(RMS_CHANNELS)
    assert result.sketch == "generic.lowered" and "fuse=thread" in result.source
    assert "dz_blocks(29360128LL, 256)" in result.source   # a thread per (n, h, w) column
    assert "(held in registers)" in result.source and "float dz_v0[64LL];" in result.source
    assert "0 B spilled" in "\n".join(result.report())
