"""Facts about a kernel of a document that hover and code lens both show: the intent whose
region holds it, and its occupancy on the target."""
from __future__ import annotations

from typing import Any

from dice_engine.arch import ArchSpec
from dice_engine.arch.occupancy import Occupancy, occupancy
from dice_engine.compile import KernelResources
from dice_engine.intent import IntentSite

from .outline import Kernel, Outline


def region_site(sites: list[IntentSite], line: int) -> IntentSite | None:
    return next((s for s in sites if s.region is not None
                 and s.region.begin_line <= line <= s.region.end_line), None)


def kernel_occupancy(arch: ArchSpec, outline: Outline, kernel: Kernel, res: KernelResources,
                     generated: dict[str, Any] | None) -> tuple[Occupancy, int] | None:
    """Occupancy and threads per block, or None when the block size is unknown. The block size
    comes from the file (literal launch, __launch_bounds__), else from the generation that wrote
    the kernel; ptxas sees static shared memory only, the generation knows the dynamic part too."""
    gen = generated["resources"] if generated else {}
    threads = outline.threads_per_block(kernel) or gen.get("threads")
    if not threads:
        return None
    smem = max(res.smem_bytes, gen.get("smem_bytes") or 0)
    return occupancy(arch, threads, res.registers, smem), threads
