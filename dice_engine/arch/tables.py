"""Per-architecture limits and named GPUs.

Limits per compute capability follow NVIDIA's CUDA C++ Programming Guide (technical
specifications per compute capability), the Blackwell tuning guide (sm_100: 228 KB of shared
memory per SM, 227 KB per block; sm_120: 128 KB of unified L1/shared memory of which 100 KB can
be shared, 99 KB per block) and the occupancy calculator's allocation rules.
Throughput figures belong to a named GPU, not to the architecture, so they live in `GPUS`;
they are the dense (no 2:4 sparsity) figures of NVIDIA's datasheets and whitepapers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class ArchSpec:
    name: str                      # "sm_90"
    compute_capability: tuple[int, int]
    gpu_name: str                  # the GPU whose figures fill in the throughput fields
    sms: int
    max_threads_per_sm: int
    max_threads_per_block: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    regs_per_sm: int
    max_regs_per_block: int
    max_regs_per_thread: int
    reg_alloc_unit: int            # registers, allocated per warp in this granularity
    smem_per_sm: int               # bytes usable by blocks on one SM
    smem_per_block_default: int    # without the opt-in attribute
    smem_per_block_optin: int      # with cudaFuncAttributeMaxDynamicSharedMemorySize
    smem_alloc_unit: int
    smem_reserved_per_block: int   # the driver's per-block reservation (sm_80+: 1 KiB)
    l2_bytes: int
    dram_gbps: float               # peak DRAM bandwidth, GB/s
    fp32_tflops: float             # non-tensor FP32
    fp16_tc_tflops: float          # dense FP16/BF16 tensor core, FP32 accumulate
    warp_size: int = 32

    @property
    def sm_number(self) -> int:
        major, minor = self.compute_capability
        return major * 10 + minor

    @property
    def has_cp_async(self) -> bool:
        return self.sm_number >= 80

    @property
    def has_bf16(self) -> bool:
        return self.sm_number >= 80

    @property
    def has_tensor_cores(self) -> bool:
        return self.sm_number >= 75

    @property
    def has_wgmma(self) -> bool:
        """Warpgroup MMA exists only on the sm_90a target (Blackwell replaced it with tcgen05)."""
        return self.sm_number == 90

    @property
    def warp_mma_full_rate(self) -> bool:
        """Whether warp-level mma.sync reaches the tensor-core peak. On sm_90 only wgmma does and
        on sm_100 only tcgen05 does; on sm_120 (RTX Blackwell) mma.sync is the native path."""
        return self.sm_number not in (90, 100)


ARCHS: dict[str, ArchSpec] = {
    "sm_75": ArchSpec("sm_75", (7, 5), "Tesla T4", sms=40, max_threads_per_sm=1024,
                      max_threads_per_block=1024, max_warps_per_sm=32, max_blocks_per_sm=16,
                      regs_per_sm=65536, max_regs_per_block=65536, max_regs_per_thread=255,
                      reg_alloc_unit=256, smem_per_sm=65536, smem_per_block_default=49152,
                      smem_per_block_optin=65536, smem_alloc_unit=256, smem_reserved_per_block=0,
                      l2_bytes=4 << 20, dram_gbps=320.0, fp32_tflops=8.1, fp16_tc_tflops=65.0),
    "sm_80": ArchSpec("sm_80", (8, 0), "A100-SXM4-80GB", sms=108, max_threads_per_sm=2048,
                      max_threads_per_block=1024, max_warps_per_sm=64, max_blocks_per_sm=32,
                      regs_per_sm=65536, max_regs_per_block=65536, max_regs_per_thread=255,
                      reg_alloc_unit=256, smem_per_sm=167936, smem_per_block_default=49152,
                      smem_per_block_optin=166912, smem_alloc_unit=128, smem_reserved_per_block=1024,
                      l2_bytes=40 << 20, dram_gbps=2039.0, fp32_tflops=19.5, fp16_tc_tflops=312.0),
    "sm_86": ArchSpec("sm_86", (8, 6), "GeForce RTX 3090", sms=82, max_threads_per_sm=1536,
                      max_threads_per_block=1024, max_warps_per_sm=48, max_blocks_per_sm=16,
                      regs_per_sm=65536, max_regs_per_block=65536, max_regs_per_thread=255,
                      reg_alloc_unit=256, smem_per_sm=102400, smem_per_block_default=49152,
                      smem_per_block_optin=101376, smem_alloc_unit=128, smem_reserved_per_block=1024,
                      l2_bytes=6 << 20, dram_gbps=936.0, fp32_tflops=35.6, fp16_tc_tflops=71.0),
    "sm_89": ArchSpec("sm_89", (8, 9), "GeForce RTX 4090", sms=128, max_threads_per_sm=1536,
                      max_threads_per_block=1024, max_warps_per_sm=48, max_blocks_per_sm=24,
                      regs_per_sm=65536, max_regs_per_block=65536, max_regs_per_thread=255,
                      reg_alloc_unit=256, smem_per_sm=102400, smem_per_block_default=49152,
                      smem_per_block_optin=101376, smem_alloc_unit=128, smem_reserved_per_block=1024,
                      l2_bytes=72 << 20, dram_gbps=1008.0, fp32_tflops=82.6, fp16_tc_tflops=165.0),
    "sm_90": ArchSpec("sm_90", (9, 0), "H100-SXM5-80GB", sms=132, max_threads_per_sm=2048,
                      max_threads_per_block=1024, max_warps_per_sm=64, max_blocks_per_sm=32,
                      regs_per_sm=65536, max_regs_per_block=65536, max_regs_per_thread=255,
                      reg_alloc_unit=256, smem_per_sm=233472, smem_per_block_default=49152,
                      smem_per_block_optin=232448, smem_alloc_unit=128, smem_reserved_per_block=1024,
                      l2_bytes=50 << 20, dram_gbps=3350.0, fp32_tflops=67.0, fp16_tc_tflops=989.0),
    # HGX B200: 148 SMs, 126 MB L2 (tuning guide), 7.7 TB/s HBM3e, 75 TFLOPS FP32, 2.25 PFLOPS FP16
    "sm_100": ArchSpec("sm_100", (10, 0), "B200", sms=148, max_threads_per_sm=2048,
                       max_threads_per_block=1024, max_warps_per_sm=64, max_blocks_per_sm=32,
                       regs_per_sm=65536, max_regs_per_block=65536, max_regs_per_thread=255,
                       reg_alloc_unit=256, smem_per_sm=233472, smem_per_block_default=49152,
                       smem_per_block_optin=232448, smem_alloc_unit=128, smem_reserved_per_block=1024,
                       l2_bytes=126 << 20, dram_gbps=7700.0, fp32_tflops=75.0, fp16_tc_tflops=2250.0),
    # GeForce RTX 5090 (RTX Blackwell whitepaper): 170 SMs, 96 MB L2, 1792 GB/s GDDR7,
    # 104.8 TFLOPS FP32, 209.5 TFLOPS FP16 tensor with FP32 accumulation. 1536 threads and
    # 24 blocks per SM as the device reports them (the programming guide's table says 32 blocks).
    "sm_120": ArchSpec("sm_120", (12, 0), "GeForce RTX 5090", sms=170, max_threads_per_sm=1536,
                       max_threads_per_block=1024, max_warps_per_sm=48, max_blocks_per_sm=24,
                       regs_per_sm=65536, max_regs_per_block=65536, max_regs_per_thread=255,
                       reg_alloc_unit=256, smem_per_sm=102400, smem_per_block_default=49152,
                       smem_per_block_optin=101376, smem_alloc_unit=128, smem_reserved_per_block=1024,
                       l2_bytes=96 << 20, dram_gbps=1792.0, fp32_tflops=104.8, fp16_tc_tflops=209.5),
}

# Named GPUs: (arch, overrides of the throughput fields). Keys are normalized with `_key`.
GPUS: dict[str, tuple[str, dict]] = {
    "t4": ("sm_75", {}),
    "rtx2080ti": ("sm_75", {"gpu_name": "GeForce RTX 2080 Ti", "sms": 68, "dram_gbps": 616.0,
                            "fp32_tflops": 13.4, "fp16_tc_tflops": 54.0, "l2_bytes": 5632 << 10}),
    "a100": ("sm_80", {}),
    "a10040gb": ("sm_80", {"gpu_name": "A100-SXM4-40GB", "dram_gbps": 1555.0}),
    "a30": ("sm_80", {"gpu_name": "A30", "sms": 56, "dram_gbps": 933.0, "fp32_tflops": 10.3,
                      "fp16_tc_tflops": 165.0, "l2_bytes": 24 << 20}),
    "rtx3090": ("sm_86", {}),
    "a10": ("sm_86", {"gpu_name": "A10", "sms": 72, "dram_gbps": 600.0, "fp32_tflops": 31.2,
                      "fp16_tc_tflops": 125.0}),
    "a40": ("sm_86", {"gpu_name": "A40", "sms": 84, "dram_gbps": 696.0, "fp32_tflops": 37.4,
                      "fp16_tc_tflops": 150.0}),
    "rtx4090": ("sm_89", {}),
    "l4": ("sm_89", {"gpu_name": "L4", "sms": 58, "dram_gbps": 300.0, "fp32_tflops": 30.3,
                     "fp16_tc_tflops": 121.0, "l2_bytes": 48 << 20}),
    "l40s": ("sm_89", {"gpu_name": "L40S", "sms": 142, "dram_gbps": 864.0, "fp32_tflops": 91.6,
                       "fp16_tc_tflops": 362.0, "l2_bytes": 96 << 20}),
    "h100": ("sm_90", {}),
    "h100pcie": ("sm_90", {"gpu_name": "H100-PCIe", "sms": 114, "dram_gbps": 2000.0,
                           "fp32_tflops": 51.2, "fp16_tc_tflops": 756.0}),
    "h200": ("sm_90", {"gpu_name": "H200", "dram_gbps": 4800.0, "l2_bytes": 60 << 20}),
    "h800": ("sm_90", {"gpu_name": "H800"}),
    "gh200": ("sm_90", {"gpu_name": "GH200", "dram_gbps": 4000.0}),
    "b200": ("sm_100", {}),
    "gb200": ("sm_100", {"gpu_name": "GB200", "dram_gbps": 8000.0, "fp32_tflops": 80.0,
                         "fp16_tc_tflops": 2500.0}),
    "b100": ("sm_100", {"gpu_name": "B100", "dram_gbps": 8000.0, "fp32_tflops": 60.0,
                        "fp16_tc_tflops": 1750.0}),
    "rtx5090": ("sm_120", {}),
    # RTX PRO 6000 Blackwell: 188 SMs, the full 128 MB L2, 125 TFLOPS FP32; the professional parts
    # do not halve FP32 accumulation, 4000 sparse FP4 TOPS → 500 dense FP16 TFLOPS
    "rtxpro6000": ("sm_120", {"gpu_name": "RTX PRO 6000 Blackwell", "sms": 188, "l2_bytes": 128 << 20,
                              "fp32_tflops": 125.0, "fp16_tc_tflops": 500.0}),
}

DEFAULT_ARCH = "sm_90"
# The most device memory of any GPU above (B200: 192 GB of HBM3e): larger tensors cannot be served.
LARGEST_GPU_MEMORY_BYTES = 192 * 10**9


class UnknownTarget(KeyError, ValueError):
    """A GPU or architecture name the tables do not know; its text is the one-line message."""

    def __str__(self) -> str:
        return str(self.args[0])


_ARCH_NAME = re.compile(r"(?:sm_?|compute_?)?(\d{1,2})\.?(\d)[af]?")


def is_arch_name(text: str) -> bool:
    """`sm_90`, `90`, `9.0`, `compute_90`, `sm_100a`: an architecture rather than a GPU's name."""
    return _ARCH_NAME.fullmatch(text.strip().lower()) is not None


def _key(name: str) -> str:
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    key = re.sub(r"^(?:nvidia)?(?:tesla|geforce)?", "", key)
    return re.sub(r"(?<=.)blackwell$", "", key)     # "RTX PRO 6000 Blackwell" → "rtxpro6000"


def supported_targets() -> str:
    """The targets, as an error message lists them."""
    return (f"{', '.join(ARCHS)} or a GPU such as A100, H100, H200, B200, GB200, RTX 4090, RTX 5090, "
            "RTX PRO 6000")


def resolve(target: str | None) -> ArchSpec:
    """An ArchSpec for `sm_90`, `90`, `9.0`, `compute_90`, `sm_100a`, or a GPU name such as "A100"
    or "RTX 5090". Raises UnknownTarget (a KeyError) with a one-line message otherwise."""
    if not target or not target.strip():
        return ARCHS[DEFAULT_ARCH]
    text = target.strip().lower()
    m = _ARCH_NAME.fullmatch(text)
    if m:
        name = f"sm_{m.group(1)}{m.group(2)}"
        if name in ARCHS:
            return ARCHS[name]
        raise UnknownTarget(f"unsupported architecture '{target.strip()}'; supported: {', '.join(ARCHS)}")
    key = _key(text)
    if key in GPUS:
        arch, overrides = GPUS[key]
        return replace(ARCHS[arch], **overrides)
    raise UnknownTarget(f"unknown GPU or architecture '{target.strip()}'; use {supported_targets()}")
