"""Where the tiled schedule should win, the no-GPU pick takes it: the default point, the
lowering's traffic model and the whole search (cost model over nvcc-compiled candidates); and
where the fused attention exists, the search prefers it to the generic plan."""

from __future__ import annotations

import pytest

from dice_engine.api import CUDAGenerator
from dice_engine.arch import ARCHS
from dice_engine.compile import nvcc_found
from dice_engine.intent import parse_intent
from dice_engine.ir.patterns import classify
from dice_engine.lowering import GeneralLowering
from dice_engine.lowering.plan import make_plan
from dice_engine.lowering.traffic import plan_bytes

CONV3D = "y = conv3d(x, w); x: f32[8, 16, 32, 32, 32]; w: f32[32, 16, 3, 3, 3]"
MATMUL4D = "C = A @ B; A: f32[16, 256, 512, 256]; B: f32[16, 256, 256, 768]"



@pytest.mark.parametrize(
    "intent, tile",
    [
        (CONV3D, 32),
        (MATMUL4D, 64),
        ("C = A @ B; A: f32[2, 3, 40, 8]; B: f32[8, 40]", 32),
        ("C = A @ B; A: f32[2, 3, 9, 8]; B: f32[8, 5]", 0),
    ],
)
def test_the_default_point_tiles_contractions_that_fill_a_tile(intent: str, tile: int) -> None:
    problem = classify(parse_intent(intent))
    assert GeneralLowering().default_point(problem, ARCHS["sm_90"])["tile"] == tile


def test_tiling_cuts_the_modelled_operand_traffic_by_the_tile_edge() -> None:
    problem = classify(parse_intent(MATMUL4D))
    plan = make_plan(problem.program.output)
    naive = plan_bytes(plan, problem.program, ["thread"], 4, 0)
    tiled = [plan_bytes(plan, problem.program, ["tiled"], 4, t) for t in (32, 64)]
    assert naive > 10 * tiled[0] > 10 * tiled[1]


@pytest.mark.slow
@pytest.mark.skipif(not nvcc_found(), reason="nvcc is not installed")
@pytest.mark.parametrize(
    "intent, sketch",
    [
        (CONV3D, "conv.implicit_gemm_nd"),   # the convolution family's GEMM beats the tiled plan
        (MATMUL4D, "generic.lowered"),
        ("y = scaled_dot_product_attention(q, k, v); q, k, v: f32[4, 8, 512, 64]", "attention.fused"),
    ],
)
def test_the_search_without_a_gpu_picks_the_tiled_or_fused_kernel(intent: str, sketch: str) -> None:
    result = CUDAGenerator(arch="sm_90", budget=8).generate(intent)
    assert result.sketch == sketch
    if sketch == "generic.lowered":
        assert result.tokens["tile"] in (32, 64)
