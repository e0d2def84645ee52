"""The analytic cost model used when no GPU measures candidates.

A roofline (DRAM bytes and flops of the problem against the GPU's peak rates) corrected by what
the compiled kernel and its launch say:
- occupancy from ptxas registers and shared memory: too few resident warps cannot hide memory
  latency (DRAM needs roughly half the warps resident, the FMA pipes about a quarter);
- waves: a grid that does not fill every SM, or whose last wave is partial, idles SMs (their
  arithmetic: a busy SM still pulls several times its even share of DRAM bandwidth);
- every launched warp costs a fixed time to start and retire, whatever it does;
- GEMM/conv operand reuse: a block computing a t×t output tile re-reads its A and B panels
  K/t times from L2, and a thread computing few outputs spends its time loading operands;
- register spills add local-memory traffic;
- asynchronous copy rings (cp.async, TMA) hide latency like extra resident warps; split-K
  partials are written by the main kernel and read back by a merge pass that runs after it;
- a CUDA-core GEMM's instruction mix bounds its FMA rate (refine/cost_gemm.py).
Estimates rank candidates; they are not predictions to report as measurements.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..arch import ArchSpec, Occupancy, occupancy
from ..compile import CompileResult
from ..ir.patterns import Problem
from ..ir.work import Work, work
from ..sketches.base import Launch, RenderedKernel
from ..sketches.gemm_common import read_problem
from .cost_gemm import (micro_tile_issue_efficiency, simt_gemm_tokens, simt_issue_efficiency,
                        simt_load_path_efficiency, simt_occupancy_efficiency)

LAUNCH_OVERHEAD_US = 2.0        # per kernel launch, host + device
L2_BANDWIDTH_FACTOR = 3.0       # L2 bandwidth as a multiple of DRAM bandwidth (A100/H100 class)
MEMORY_SATURATION_OCC = 0.5     # resident-warp fraction at which DRAM bandwidth is reached
COMPUTE_SATURATION_OCC = 0.25   # ... at which the arithmetic pipes are kept busy
# A tensor-core warp tile issues dozens of independent MMAs per k-step: one 8-warp block per SM
# keeps the tensor pipes fed (CUTLASS's 128x256 tiles run at one block per SM).
COMPUTE_SATURATION_OCC_TENSOR = 0.125
SPILL_PENALTY_PER_128B = 0.5    # relative slowdown per 128 bytes spilled per thread, capped below
MAX_SPILL_PENALTY = 3.0
# One hand-off between chained blocks: a value and a flag written past a fence, seen by a block
# polling the flag through L2 (about a microsecond on A100/H100-class parts).
HANDOFF_US = 1.0
# SM time every launched warp costs however little it does (start, index arithmetic, retire): a
# grid of millions of near-empty warps is paced by this, not by its bytes. Measured: a map of one
# element per thread over 1.6e9 floats (50 M warps) ran at 78-85% of PyTorch's copy-rate map on an
# H200, about 10 ns per warp per SM; on an H100, row reductions split into 2-8 M blocks of a few
# elements each took 12-17 ns per warp (a block-wide combine included).
WARP_OVERHEAD_NS = 12.0
# A grid that leaves SMs idle is paced by its busy SMs' arithmetic, but each of those can pull
# several times its even share of DRAM bandwidth (through its L1's path to L2): about 6x, chosen
# over the denoiser dataset's training problems (H100 measurements), where 4-12x did alike.
SM_BANDWIDTH_SHARE = 6.0
# DRAM latency under load (about 700 ns on A100/H100-class parts), for Little's law: measured on
# an H100 through the GEMV sketch's (vector, unroll) grid, and a generic split sum reading two
# tensors one scalar each per loop trip at four 256-thread blocks per SM (8 KiB in flight per
# SM): 1.4 ms for 2.1 GB, 46% of DRAM bandwidth, where the law says 45%.
LOADED_DRAM_LATENCY_S = 700e-9
_TENSOR_CORE_CODE = re.compile(r"\bwmma::|\bmma_sync\b|\bmma\.sync\b|\bwgmma\b|\bldmatrix\b")
_WARPGROUP_MMA = re.compile(r"\bwgmma\b")
_TF32_MMA = re.compile(r"\.tf32\.tf32\.")
# On sm_90 the dense tensor-core peak is reached only through wgmma; warp-level mma.sync/wmma
# reach about a third of it (measured on an H200, 4096³ f16: DICE's mma.sync sketch 327 TFLOP/s
# GPU-tuned and 225 TFLOP/s at its default point, of a 989 TFLOP/s peak; its wgmma sketch 558).
# On sm_100 the peak needs tcgen05, which DICE does not emit; the same fraction is assumed there
# (not measured: no B200 was at hand).
WARP_MMA_FRACTION = 0.33


@dataclass
class CostEstimate:
    time_us: float                  # math.inf when the kernel cannot launch
    dram_us: float
    l2_us: float
    compute_us: float
    occupancy: Occupancy | None     # of the main launch
    blocks: int
    waves: float
    spill_bytes: int
    notes: list[str] = field(default_factory=list)   # what held it back, most important first

    @property
    def bound(self) -> str:
        return "compute" if self.compute_us >= max(self.dram_us, self.l2_us) else "memory"


def uses_tensor_cores(source: str) -> bool:
    return bool(_TENSOR_CORE_CODE.search(source))


def compute_rate_tflops(problem: Problem, arch: ArchSpec, source: str) -> float:
    dtype = problem.output.dtype if problem.anchor is None else problem.anchor.args[0].dtype
    if uses_tensor_cores(source) and arch.has_tensor_cores:
        rate = arch.fp16_tc_tflops / (2 if _TF32_MMA.search(source) else 1)   # TF32: half the f16 rate
        if not arch.warp_mma_full_rate and not (arch.has_wgmma and _WARPGROUP_MMA.search(source)):
            return rate * WARP_MMA_FRACTION
        return rate
    if dtype.name == "f64":   # half-rate FP64 only on the data-centre parts of sm_80/sm_90/sm_100
        return arch.fp32_tflops / (2 if arch.sm_number in (80, 90, 100) else 64)
    return arch.fp32_tflops


def bytes_in_flight_efficiency(per_thread: int, threads_per_sm: float, arch: ArchSpec) -> float:
    """The fraction of DRAM bandwidth an SM's outstanding loads sustain: by Little's law it must
    keep its share of the bandwidth times the loaded latency in flight."""
    needed = arch.dram_gbps * 1e9 / arch.sms * LOADED_DRAM_LATENCY_S
    return min(1.0, per_thread * threads_per_sm / needed)


def main_launch(rendered: RenderedKernel) -> Launch:
    """The launch whose grid and occupancy pace the whole kernel."""
    if rendered.main_launch is not None:
        return rendered.launches[rendered.main_launch]
    if rendered.k_splits > 1:   # the split stage comes first; its merge has more threads, less work
        return rendered.launches[0]
    return max(rendered.launches, key=lambda launch: launch.blocks * launch.threads)


def estimate(problem: Problem, arch: ArchSpec, rendered: RenderedKernel, compiled: CompileResult,
             problem_work: Work | None = None) -> CostEstimate:
    w = rendered.work or problem_work or work(problem)
    launch = main_launch(rendered)
    res = compiled.kernel(launch.kernel)
    registers = res.registers if res else 0
    smem = max(launch.smem_bytes, res.smem_bytes if res else 0)
    spill = res.spill_bytes if res else 0
    occ = occupancy(arch, launch.threads, registers, smem)
    dram_bytes = w.dram_bytes if rendered.dram_bytes is None else max(w.dram_bytes, rendered.dram_bytes)
    dram_us = (dram_bytes + rendered.workspace_bytes) / (arch.dram_gbps * 1e3)
    # the merge pass reads the partials back (and writes the output) after the main kernel ends
    merge_us = rendered.workspace_bytes * (1 + 1 / max(1, rendered.k_splits)) / (arch.dram_gbps * 1e3)
    compute_us = w.flops / (compute_rate_tflops(problem, arch, rendered.source) * 1e6)
    if occ.blocks_per_sm == 0:
        return CostEstimate(math.inf, dram_us, 0.0, compute_us, occ, launch.blocks, math.inf, spill,
                            [f"cannot launch: {occ.limiter} exceed what one SM holds"])
    notes: list[str] = []

    # Residency: a grid smaller than one full wave leaves SMs idle or thinly populated.
    warps_per_block = -(-launch.threads // arch.warp_size)
    resident_blocks = min(occ.blocks_per_sm, launch.blocks / arch.sms)
    active = resident_blocks * warps_per_block / arch.max_warps_per_sm
    coverage = min(1.0, launch.blocks / arch.sms)
    waves = launch.blocks / (occ.blocks_per_sm * arch.sms)
    tail = waves / math.ceil(waves) if waves > 1 else 1.0
    if coverage < 1:
        notes.append(f"{launch.blocks} blocks leave {arch.sms - launch.blocks} of {arch.sms} SMs idle")
    elif tail < 0.85:
        notes.append(f"partial last wave ({waves:.2f} waves)")
    if occ.fraction < MEMORY_SATURATION_OCC:
        notes.append(f"occupancy {occ.fraction:.0%} (limited by {occ.limiter})")

    # Little's law: an asynchronous copy ring keeps several operand slices per block in flight,
    # which hides memory latency as well as that many times the resident warps would.
    hiding = active * max(1, rendered.async_slices)
    memory_eff = min(1.0, 0.25 + 0.75 * hiding / MEMORY_SATURATION_OCC)
    if rendered.bytes_in_flight is not None:   # Little's law on the declared loads, not the warps
        threads_per_sm = resident_blocks * launch.threads
        streamed = bytes_in_flight_efficiency(rendered.bytes_in_flight, threads_per_sm, arch)
        memory_eff = streamed
        if streamed < 1:
            notes.append(f"loads in flight sustain about {streamed:.0%} of DRAM bandwidth")
    tensor = uses_tensor_cores(rendered.source)
    saturation = COMPUTE_SATURATION_OCC_TENSOR if tensor else COMPUTE_SATURATION_OCC
    compute_eff = min(1.0, 0.4 + 0.6 * active / saturation)
    l2_us = 0.0
    if w.gemm is not None:
        g = w.gemm
        # split-K blocks share an output tile: the tile edge counts tiles, not blocks
        tile = math.sqrt(max(1.0, g.batch * g.m * g.n * rendered.k_splits / launch.blocks))
        assert problem.anchor is not None        # a gemm shape comes from the anchor
        operand_bytes = 2.0 * g.batch * g.m * g.n * g.k * problem.anchor.args[0].dtype.size / tile
        l2_us = operand_bytes / (L2_BANDWIDTH_FACTOR * arch.dram_gbps * 1e3)
        block_m, block_n = rendered.tokens.get("block_m"), rendered.tokens.get("block_n")
        if rendered.work is None and isinstance(block_m, int) and isinstance(block_n, int):
            # a block multiplies its whole tile: rows and columns past the edges cost as much as the rest
            padded = math.ceil(g.m / block_m) * block_m * math.ceil(g.n / block_n) * block_n / (g.m * g.n)
            compute_us *= padded
            if padded >= 1.5:
                notes.append(f"edge tiles multiply {padded:.1f}x the useful products")
        outputs_per_thread = g.batch * g.m * g.n * rendered.k_splits / (launch.blocks * launch.threads)
        simt = None if tensor else simt_gemm_tokens(rendered)
        gp = read_problem(problem) if simt is not None else None
        if simt is not None and gp is not None and not isinstance(gp, str):
            ring = rendered.async_slices > 0
            compute_eff = simt_occupancy_efficiency(simt, active)
            compute_eff *= simt_issue_efficiency(simt, a_transposed_store=gp.a.layout == "row",
                                                 b_transposed_store=gp.b.layout != "row", ring=ring)
            compute_eff *= simt_load_path_efficiency(simt["vector"], ring=ring)
        elif not tensor:
            compute_eff *= micro_tile_issue_efficiency(outputs_per_thread)
        if tile < 64:
            notes.append(f"small output tile per block (~{tile:.0f}×{tile:.0f}): operands re-read from L2")

    memory_share = min(1.0, coverage * SM_BANDWIDTH_SHARE)
    time_us = max(max(dram_us, l2_us) / memory_eff / memory_share, compute_us / compute_eff / coverage) / tail
    warps_us = launch.blocks * warps_per_block * WARP_OVERHEAD_NS * 1e-3 / arch.sms
    if warps_us > time_us:
        time_us = warps_us
        notes.insert(0, f"{launch.blocks * warps_per_block} warps launched: about {warps_us:.0f} us "
                        "of starting and retiring them")
    if rendered.chains:
        # Each chain advances one block per hand-off, and only chains holding a resident block advance.
        advancing = min(rendered.chains, occ.blocks_per_sm * arch.sms)
        chain_us = launch.blocks / advancing * HANDOFF_US
        if chain_us > time_us:
            time_us = chain_us
            notes.insert(0, f"{launch.blocks // rendered.chains} chained blocks per chain, "
                            f"{advancing} chains advancing: about {chain_us:.0f} us of hand-offs")
    if merge_us:
        time_us += merge_us
        partials_mib = rendered.workspace_bytes >> 20
        notes.append(f"split-K merge pass: about {merge_us:.0f} us reading {partials_mib} MiB of partials")
    if spill:
        time_us *= 1 + min(MAX_SPILL_PENALTY, SPILL_PENALTY_PER_128B * spill / 128)
        notes.insert(0, f"{spill} bytes of register spills per thread")
    time_us += LAUNCH_OVERHEAD_US * len(rendered.launches)
    return CostEstimate(time_us, dram_us, l2_us, compute_us, occ, launch.blocks, waves, spill, notes)
