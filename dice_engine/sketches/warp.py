"""CUDA building blocks shared by the memory-bound sketches (elementwise, reduction, softmax,
norm), and the launch geometry, text conventions and rendering around them.

Device helpers come back as text that the caller puts inside its region's `namespace dice_<name>`
(through `base.frame`), so two generated regions in one translation unit never collide:
`PACK_HELPERS` (16-byte aligned packs) and `SHUFFLE_HELPERS` (word-wise shuffles of any value and
a deterministic reduction over the threads sharing a row); `workspace_code` is the launcher-owned
buffer of two-kernel strategies.
"""
from __future__ import annotations

from typing import Sequence

from ..arch import ArchSpec
from ..ir.dtypes import DType
from .base import DesignSpace, Launch, Param, Point, RenderedKernel, frame, launcher_signature

PACK_BYTES = 16   # one 128-bit load or store per thread: the widest global access

PACK_HELPERS = """\
// N consecutive elements moved as one aligned access (16 bytes: a single 128-bit load/store).
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
    T v[N];
};

template <typename T, int N>
__device__ __forceinline__ Pack<T, N> load_pack(const T* __restrict__ base, long long pack_index) {
    return reinterpret_cast<const Pack<T, N>*>(base)[pack_index];
}

template <typename T, int N>
__device__ __forceinline__ void store_pack(T* __restrict__ base, long long pack_index,
                                           const Pack<T, N>& pack) {
    reinterpret_cast<Pack<T, N>*>(base)[pack_index] = pack;
}"""

SHUFFLE_HELPERS = """\
// Warp shuffles of any value made of 32-bit words (floats, doubles, 64-bit ints, small structs).
// Every lane of the warp must call them: the mask is the full warp.
template <typename T>
__device__ __forceinline__ T shfl_down(T value, int offset, int width) {
    static_assert(sizeof(T) % 4 == 0, "shuffled values are made of 32-bit words");
    int words[sizeof(T) / 4];
    memcpy(words, &value, sizeof(T));
#pragma unroll
    for (int w = 0; w < int(sizeof(T) / 4); ++w)
        words[w] = __shfl_down_sync(0xffffffffu, words[w], offset, width);
    memcpy(&value, words, sizeof(T));
    return value;
}

template <typename T>
__device__ __forceinline__ T shfl_idx(T value, int src_lane, int width) {
    static_assert(sizeof(T) % 4 == 0, "shuffled values are made of 32-bit words");
    int words[sizeof(T) / 4];
    memcpy(words, &value, sizeof(T));
#pragma unroll
    for (int w = 0; w < int(sizeof(T) / 4); ++w)
        words[w] = __shfl_sync(0xffffffffu, words[w], src_lane, width);
    memcpy(&value, words, sizeof(T));
    return value;
}

// Combines `value` over the G consecutive threads (G a power of two) that share one row and
// gives every one of them the result. Deterministic and identical in every lane: a fixed tree
// to the group's first lane, a broadcast, then a fixed order over the group's warps. All
// threads of the block must call it together (full-mask shuffles; barriers when G > 32).
// `warp_partials` is shared memory with one slot per warp of the block.
template <int G, typename T, typename Op>
__device__ __forceinline__ T group_reduce(T value, Op op, T* warp_partials) {
    constexpr int kWidth = G < 32 ? G : 32;
#pragma unroll
    for (int offset = kWidth / 2; offset > 0; offset /= 2)
        value = op(value, shfl_down(value, offset, kWidth));
    value = shfl_idx(value, 0, kWidth);
    if constexpr (G > 32) {
        constexpr int kWarpsPerGroup = G / 32;
        const int warp = threadIdx.x / 32;
        const int first_warp = warp / kWarpsPerGroup * kWarpsPerGroup;
        __syncthreads();   // the previous call's readers are done with warp_partials
        if (threadIdx.x % 32 == 0) warp_partials[warp] = value;
        __syncthreads();
        value = warp_partials[first_warp];
#pragma unroll
        for (int w = 1; w < kWarpsPerGroup; ++w) value = op(value, warp_partials[first_warp + w]);
    }
    return value;
}"""

def workspace_code(acc_type: str) -> str:
    """A launcher-side device buffer for stage-1 partials of type `acc_type`."""
    return f"""\
// Stage-1 partials: a device buffer grown on demand and kept for later calls (no allocation
// in steady state). Freeing the old buffer synchronizes the device, so it is never in use.
inline {acc_type}* workspace(long long count) {{
    static void* buffer = nullptr;
    static long long capacity = 0;
    if (count > capacity) {{
        if (buffer != nullptr) cudaFree(buffer);
        if (cudaMalloc(&buffer, count * sizeof({acc_type})) != cudaSuccess) {{
            buffer = nullptr;
            capacity = 0;
            return nullptr;
        }}
        capacity = count;
    }}
    return static_cast<{acc_type}*>(buffer);
}}"""


# ---------------------------------------------------------------------------------------------
# Launch geometry

def pack_width(dtypes: Sequence[DType]) -> int:
    """Elements per 16-byte pack for the widest of `dtypes` (narrower tensors move fewer bytes)."""
    return PACK_BYTES // max(d.size for d in dtypes)

def pow2_floor(n: int) -> int:
    """The power of two at or below `n` (1 for n < 2)."""
    return 1 << (max(1, n).bit_length() - 1)


def pow2_range(lo: int, hi: int) -> tuple[int, ...]:
    out, v = [], lo
    while v <= hi:
        out.append(v)
        v *= 2
    return tuple(out)

def resident_blocks(arch: ArchSpec, threads: int) -> int:
    """Blocks of `threads` one SM holds at most by the thread and block limits."""
    return max(1, min(arch.max_threads_per_sm // threads, arch.max_blocks_per_sm))

def min_blocks_per_sm(arch: ArchSpec, threads: int) -> int:
    """The `__launch_bounds__` minimum: half the thread-limited residency. It lets ptxas use up
    to twice the full-occupancy register budget (keeping >= 50% occupancy) instead of spilling
    to reach full occupancy."""
    return max(1, resident_blocks(arch, threads) // 2)

def register_budget(arch: ArchSpec, threads: int) -> int:
    """Registers per thread ptxas may use under `min_blocks_per_sm`."""
    per_block = arch.regs_per_sm // min_blocks_per_sm(arch, threads)
    return min(arch.max_regs_per_thread, per_block // threads, arch.max_regs_per_block // threads)

def shrink_unroll(space: DesignSpace, point: Point) -> Point:
    """A prior's `point` made legal for registers: `unroll` halved while that helps, then vec=1
    (gathers too wide for registers: one element at a time)."""
    while not space.is_legal(point) and point["unroll"] > 1:
        point["unroll"] //= 2
    if not space.is_legal(point):
        point["vec"] = 1
    return point

def block_threads_violation(arch: ArchSpec, threads: int) -> str | None:
    """Why a block of `threads` threads cannot launch as whole warps, or None."""
    if threads > arch.max_threads_per_block:
        return f"{threads} threads exceed the block limit {arch.max_threads_per_block}"
    if threads % arch.warp_size:
        return f"{threads} threads is not a whole number of warps"
    return None

def wave_grid_cap(arch: ArchSpec, threads: int, waves: int) -> int:
    """A grid of `waves` full waves of resident blocks over all SMs (for grid-stride loops)."""
    return arch.sms * resident_blocks(arch, threads) * waves

def dynamic_smem_lines(arch: ArchSpec, kernel: str, smem_bytes: int, static_bytes: int = 0) -> str:
    """Launcher lines defining `smem_bytes` of dynamic shared memory; where it and the kernel's
    `static_bytes` pass the default per-block limit together, the kernel opts in (once) to the
    larger dynamic size (without it the launch fails with "invalid argument")."""
    if smem_bytes + static_bytes <= arch.smem_per_block_default:
        return f"    const size_t smem_bytes = {smem_bytes};"
    return (f"    const size_t smem_bytes = {smem_bytes};   // the row cache, past the default limit\n"
            f"    static const bool opted_in = cudaFuncSetAttribute(kn::{kernel}, "
            f"cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes) == cudaSuccess;\n"
            f"    if (!opted_in) return;")


def partials_row_pad(tile: int, vec: int, elem_bytes: int) -> int:
    """Padding elements per row of a shared [split][vec * tile] array of partials written at
    [threadIdx.y][elem * tile + threadIdx.x]. When one wavefront's lanes span several rows
    (tile below its slots: 32 four-byte banks, 16 eight-byte slots, ...), rows must start `tile`
    slots apart modulo the banks, or lanes of different rows share banks."""
    slots = 128 // elem_bytes
    return 0 if tile >= slots else (tile - vec * tile) % slots


def partials_smem_bytes(split: int, tile: int, vec: int, elem_bytes: int) -> int:
    """Shared memory of that [split][vec * tile + pad] array of `elem_bytes` partials."""
    return split * (tile * vec + partials_row_pad(tile, vec, elem_bytes)) * elem_bytes


# ---------------------------------------------------------------------------------------------
# Generated-code text

def indent(code: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line.strip() else "" for line in code.splitlines())

def tidy(code: str) -> str:
    """Cosmetics for generated code: each `#pragma` indented like the statement it governs,
    and no blank lines left where an optional statement was empty."""
    lines = code.splitlines()
    out: list[str] = []
    for i, line in enumerate(lines):
        if not line.strip() and out and out[-1].rstrip().endswith(("{", ";")) and \
                i + 1 < len(lines) and lines[i + 1].startswith(" "):
            continue    # an empty optional line inside a block
        if line.lstrip().startswith("#pragma"):
            following = next((n for n in lines[i + 1:] if n.strip()), "")
            line = " " * (len(following) - len(following.lstrip())) + line.strip()
        out.append(line.rstrip())
    return "\n".join(out)


def rendered_kernel(sketch: str, point: Point, name: str, strategy: str, device: str, launcher: str,
                    params: list[Param], launches: list[Launch]) -> RenderedKernel:
    """A memory-bound sketch's rendering: `device` tidied inside the region's frame, each
    launch's kernel qualified by the region's namespace, the sketch and its tokens as summary."""
    source = frame(name=name, strategy=strategy, tokens=point, device_code=tidy(device),
                   launcher_code=launcher)
    tokens = " ".join(f"{k}={v}" for k, v in point.items())
    return RenderedKernel(sketch=sketch, tokens=dict(point), source=source,
                          kernel_names=[f"dice_{name}::{launch.kernel}" for launch in launches],
                          launcher=launcher, params=params, launches=launches,
                          summary=f"{sketch} {tokens}")


def launcher_opening(name: str, params: list[Param], sizes: dict[str, str], empty: str) -> str:
    """A launcher's first lines: its signature, `kn` naming the region's namespace, the 64-bit
    `sizes` (name: C expression) and a return when `empty` (a C condition on them) holds."""
    lines = [f"{launcher_signature(name, params)} {{", f"    namespace kn = dice_{name};"]
    lines += [f"    const long long {size} = {value};" for size, value in sizes.items()]
    lines.append(f"    if ({empty}) return;")
    return "\n".join(lines)
