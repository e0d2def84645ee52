"""The cost model's view of a CUDA-core (SIMT) GEMM main loop: how much of the FMA pipe's issue
rate its instruction mix can reach.

Per k step a thread with a TM×TN register tile issues TM·TN FMAs and (TM+TN)/4 16-byte shared
reads of its A column and B row; per BK-deep slice it also issues its share of the global loads
of the A and B tiles, the shared stores that put them in place (element by element where the tile
is stored transposed or the loads are scalar), and a barrier and loop bookkeeping. Only the FMAs
are useful: their share of the issued instructions bounds the rate. The shared reads also queue:
the four schedulers of an SM each issue one warp FMA per clock, but share one shared-memory
wavefront per clock, and a warp's 16-byte fragment read is one wavefront (4×8 thread patches), so
per k step the reads take (TM+TN) clocks of the SM against TM·TN of FMAs. Past a quarter (an 8×8
tile) they stall the FMAs waiting on them (a 4×4 tile is at a half: MIO throttle).
Independent accumulators per thread stand in for resident warps in hiding the FMA latency, but
not the shared-read latency: a 4×4 tile wants about half of the warp slots, and even an 8×8 one a
quarter (16 warps). Measured on an H100 at KernelBench's GEMM shapes, an 8×8 tile with 8 resident
warps ran at 0.81-0.83 of its speed with 16.
"""

from __future__ import annotations

from ..sketches.base import RenderedKernel

SIMT_GEMM_SKETCH = "gemm.simt_tiled"
SLICE_OVERHEAD = 8  # barrier, loop and address instructions per BK slice and thread
SMEM_READ_FREE_RATIO = 0.25  # shared-read wavefronts per SM clock of FMAs that overlap for free
STAGING_PER_K = 4  # operand-tile staging instructions per k step and thread (general lowering)
WARP_FRACTION_4X4 = 0.5  # resident-warp fraction that saturates the FMA pipe with 16 accumulators
MIN_SATURATING_FRACTION = 0.25  # what any register tile needs (16 warps): shared-read latency


def simt_gemm_tokens(rendered: RenderedKernel) -> dict[str, int] | None:
    """The SIMT GEMM sketch's tile tokens, None for any other kernel."""
    names = ("block_m", "block_n", "block_k", "thread_m", "thread_n", "vector")
    if rendered.sketch != SIMT_GEMM_SKETCH or not all(n in rendered.tokens for n in names):
        return None
    return {n: int(rendered.tokens[n]) for n in names}


def simt_issue_efficiency(t: dict[str, int], a_transposed_store: bool, b_transposed_store: bool,
                          ring: bool = False) -> float:
    """The FMA share of the main loop's issue slots, slowed by shared-read queueing. With the
    cp.async `ring` a load and its store are one copy (element by element into a transposed tile)."""
    threads = (t["block_m"] // t["thread_m"]) * (t["block_n"] // t["thread_n"])
    fmas = t["thread_m"] * t["thread_n"]
    shared_reads = (t["thread_m"] + t["thread_n"]) / 4
    a_loads = t["block_m"] * t["block_k"] / (threads * t["vector"])
    b_loads = t["block_n"] * t["block_k"] / (threads * t["vector"])
    stores = a_loads * (t["vector"] if a_transposed_store else 1) + b_loads * (
        t["vector"] if b_transposed_store else 1
    )
    moves = stores if ring else a_loads + b_loads + stores
    per_k = fmas + shared_reads + (moves + SLICE_OVERHEAD) / t["block_k"]
    queueing = 1 + max(0.0, (t["thread_m"] + t["thread_n"]) / fmas - SMEM_READ_FREE_RATIO)
    return fmas / per_k / queueing


# How fast each way of moving the operand tiles ran, relative to float4 loads staged in registers
# (measured on an H100 at KernelBench's fp32 shapes, same tiles: benchmarks/GEMM_SWEEP_H100.md).
# Scalar loads staged in registers keep many small loads in flight per thread and stall on them;
# a cp.async ring hides that (8205x2949x5921: 69% -> 81% of cuBLAS) but with float4 loads it lost
# everywhere to register staging (0.67-0.97 of its speed, about 0.8 typical).
LOAD_PATH_EFFICIENCY = {(False, False): 0.74, (False, True): 0.85, (True, False): 1.0, (True, True): 0.8}


def simt_load_path_efficiency(vector: int, ring: bool) -> float:
    """The measured speed of the tile-moving path (vector loads or not, cp.async ring or not)."""
    return LOAD_PATH_EFFICIENCY[(vector > 1, ring)]


def simt_occupancy_efficiency(t: dict[str, int], active: float) -> float:
    """The share of the FMA pipe this register tile keeps busy with `active` of the SM's warp
    slots resident: full from the saturating fraction on, 0.8 at half of it (measured), 0.6 with
    next to none."""
    saturating = max(MIN_SATURATING_FRACTION, WARP_FRACTION_4X4 * 16 / (t["thread_m"] * t["thread_n"]))
    return min(1.0, 0.6 + 0.4 * active / saturating)


def micro_tile_issue_efficiency(outputs_per_thread: float) -> float:
    """The FMA share of issue slots for any other CUDA-core GEMM-shaped loop (the general
    lowering's tiled schedule, a thread per output): an r×r micro-tile reads its r + r operands
    with scalar loads, each a wavefront, and stages its share of the operand tiles (about
    `STAGING_PER_K` instructions per k step). Measured on an H100 at KernelBench's shapes: the
    general lowering's 4×4 micro-tiles (64×64 tiles) ran at 18-20 TFLOP/s where the SIMT sketch's
    8×8 tiles ran at 42: this gives 0.46 against the sketch's 0.92."""
    r = max(1.0, outputs_per_thread) ** 0.5
    fmas, reads = r * r, 2 * r
    queueing = 1 + max(0.0, reads / fmas - SMEM_READ_FREE_RATIO)
    return fmas / (fmas + reads + STAGING_PER_K) / queueing
