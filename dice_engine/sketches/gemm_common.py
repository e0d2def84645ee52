"""What the GEMM families share: reading a `gemm` problem as (batch, M, N, K, operand layouts),
the fused epilogue (written by fusion.py) bound to it, and the kernel/launcher parameter plumbing.

Conventions of the generated code: `A` is the logical M×K operand and `B` the K×N one, whatever
the inputs are called. An operand is "row" when its second logical index is the contiguous one
(A: k, B: n) and "col" when it is the `.T` of an input (A: m, B: k contiguous). Kernels take the
sizes as `int M, int N, int K` (block offsets into a matrix are formed in 64 bits) and the batch
index is `blockIdx.z`. A product of rank 4 or more against a 2-D B is one GEMM whose M is the
product of the left operand's leading extents (both A and C are contiguous over them).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..ir.dtypes import DType
from ..ir.graph import Dim, Node
from ..ir.ops import ELEMENTWISE
from ..ir.patterns import Problem
from .base import Point, accepted, dim_c, store_from_compute
from .fusion import broadcast_epilogue, broadcast_epilogue_call, epilogue_nodes

# Identifiers of the generated GEMM code (sizes, locals, tile constants, helpers): a tensor
# called one of these is renamed in the kernel (the launcher keeps the intent's names).
_RESERVED = set("""
M N K A_b B_b C_b As Bs smem acc batch row col lane warp warp_m0 warp_n0 m0 n0 k0 tx ty m n k i j l e c r s
w v idx src valid half mi ni kk kt buf stage more next k_tiles a_frag b_frag a_stage b_stage load_tiles
store_tiles copy_tiles multiply epilogue smem_addr ldmatrix_x4 ldmatrix_x4_trans mma_16x8x16 cp_async_16
cp_async_commit cp_async_wait BM BN BK TM TN WM WN MT NT VEC PAD STAGES THREADS THREADS_X THREADS_Y WARPS_N
A_PITCH B_PITCH A_TILE B_TILE A_LOADS B_LOADS A_CHUNKS B_CHUNKS gm gn gk chunk upper smem_raw smem_base
wg_m0 mn0 a_tile b_tile a_desc b_desc copy_tiles descriptor swizzled fence_proxy_async fence_registers
wgmma_fence wgmma_commit wgmma_wait wgmma_m64k16 WARPGROUPS WG_M MI A_BYTES B_BYTES STAGE_BYTES TRANS_A
TRANS_B A_LBO B_LBO SBO WARPS_X a_map b_map full_bar empty_bar panel tile tiles m_tiles n_tiles batches it
locate group first rows mbar_init mbar_arrive mbar_arrive_expect_tx mbar_wait fence_barrier_init tma_load_2d
tma_load_3d encode_tile_map TmaMap EncodeTiled CONSUMERS GROUP_M
""".split())
_MAX_GRID_Y = _MAX_GRID_Z = 65535   # blocks along grid y (row tiles of >= 64) and z (batch)


@dataclass(frozen=True)
class Operand:
    """One matmul operand as stored in memory."""
    input_name: str     # the intent's tensor
    param: str          # its kernel parameter name
    dtype: DType
    layout: str         # "row" | "col" (see module doc)
    batched: bool       # has its own matrix per batch (else broadcast over the batch)

    def leading_dim(self, which: str, gp: "GemmProblem") -> Dim:
        """Elements between consecutive rows of storage: the extent of the contiguous index."""
        contiguous = {("A", "row"): gp.K, ("A", "col"): gp.M,
                      ("B", "row"): gp.N, ("B", "col"): gp.K}
        return contiguous[(which, self.layout)]


@dataclass(frozen=True)
class GemmProblem:
    problem: Problem
    batch: Dim          # 1 when not batched
    M: Dim
    N: Dim
    K: Dim
    a: Operand
    b: Operand
    in_dtype: DType
    out_dtype: DType
    acc_ctype: str      # "float" | "double"

    @property
    def anchor(self) -> Node:
        assert self.problem.anchor is not None
        return self.problem.anchor

    @property
    def has_epilogue(self) -> bool:
        return self.problem.output is not self.problem.anchor

    @property
    def out_param(self) -> str:
        return param_name(self.problem.program.output_name)

    def hint(self, d: Dim) -> int:
        """A dimension's value at the intent's hint sizes (for grids and cost estimates)."""
        return self.problem.program.concrete_shape((d,))[0]

    def is_multiple(self, d: Dim, n: int) -> bool:
        """True when `d` is a literal multiple of n (a symbol's value is only known at run time)."""
        return isinstance(d, int) and d % n == 0


def param_name(tensor: str) -> str:
    return tensor + "_" if tensor in _RESERVED else tensor


def _operand(node: Node, batch_rank: bool) -> Operand | str:
    """An Operand for a matmul argument, or why it cannot be one."""
    layout = "row"
    if node.op == "permute" and node.args[0].op == "input":
        layout, node = "col", node.args[0]
    if node.op != "input":
        return (f"a prologue on a GEMM operand ({node.op}) is not supported; "
                "compute it in its own kernel first")
    batched = batch_rank and node.rank == 3 and node.shape[0] != 1
    return Operand(node.name or "", param_name(node.name or ""), node.dtype, layout, batched)


def read_problem(problem: Problem) -> GemmProblem | str:
    """The problem as a GEMM, or why it is not one the GEMM sketches serve."""
    mm = problem.anchor
    if problem.pattern != "gemm" or mm is None or mm.op != "matmul":
        return "not a matmul"
    a_node, b_node = mm.args
    batched = mm.rank == 3
    a = _operand(a_node, batched)
    b = _operand(b_node, batched)
    for side in (a, b):
        if isinstance(side, str):
            return side
    assert isinstance(a, Operand) and isinstance(b, Operand)
    options = problem.program.options
    accumulate = options.get("accumulate", "f32").lower()
    if accumulate not in ("f32", "fp32", "float", "float32") and mm.dtype.name != "f64":
        return f"accumulate={accumulate} is not supported (GEMMs accumulate in f32)"
    for n in epilogue_nodes(problem.output, mm):
        if n.op == "index" and n.shape == mm.shape:   # an output position (triu/tril masks)
            continue
        if n.op not in ("input", "const") and n.op not in ELEMENTWISE:
            return f"the epilogue applies '{n.op}' to a matmul operand; only elementwise epilogues fuse"
        if n.op == "input" and n.rank > mm.rank:
            return f"epilogue input '{n.name}' has a higher rank than the matmul"
    if options.get("layout", "row").lower() != "row":
        return "layout=col is not supported by the GEMM sketches; write the transposes (A.T) in the intent"
    M, N = mm.shape[-2], mm.shape[-1]
    K = a_node.shape[-1]
    batch: Dim = mm.shape[0] if batched else 1
    if mm.rank > 3:   # [..., M, K] @ [K, N]: one GEMM over the rows of the contiguous leading dims
        rows = mm.shape[:-1]
        if a.layout != "row" or not all(isinstance(d, int) for d in rows):
            return "a product of rank 4 or more needs a stored, literal-shaped left operand to flatten"
        if any(n.op == "input" and n.rank > 1 for n in epilogue_nodes(problem.output, mm)):
            return "a product of rank 4 or more fuses only per-column epilogue inputs (rank 1)"
        M = math.prod(int(d) for d in rows)
    if any(isinstance(d, int) and d >= 2**31 for d in (M, N, K)):
        return "matrix extents of 2^31 or more are not supported (sizes are passed as int)"
    if isinstance(M, int) and M > _MAX_GRID_Y * 64:
        return f"M={M} needs more than {_MAX_GRID_Y} row blocks"
    if isinstance(batch, int) and batch > _MAX_GRID_Z:
        return f"a batch of {batch} exceeds the grid's z limit ({_MAX_GRID_Z})"
    acc = "double" if mm.dtype.name == "f64" else "float"
    return GemmProblem(problem, batch, M, N, K, a, b, mm.dtype, problem.output.dtype, acc)


def gemm_problem(problem: Problem) -> GemmProblem:
    """`read_problem` for a problem the sketch already accepted (unsupported() returned None)."""
    return accepted(read_problem(problem))


# ---------------------------------------------------------------------------------------------
# Parameters

def kernel_params(gp: GemmProblem) -> str:
    """The kernel's parameter list: every input (declaration order), the output, the sizes."""
    prog = gp.problem.program
    ptrs = [f"const {d.dtype.c_type}* __restrict__ {param_name(n)}" for n, d in prog.inputs.items()]
    ptrs.append(f"{gp.out_dtype.c_type}* __restrict__ {gp.out_param}")
    return ", ".join(ptrs + ["int M", "int N", "int K"])


def kernel_args(gp: GemmProblem) -> str:
    """The launcher's arguments for the kernel (launcher params are the intent's names)."""
    prog = gp.problem.program
    names = list(prog.inputs) + [prog.output_name]
    sizes = [f"(int)({dim_c(d)})" for d in (gp.M, gp.N, gp.K)]
    return ", ".join(names + sizes)


def batch_pointer(ctype: str, local: str, param: str, batched: bool, matrix_elems: str,
                  batch: str = "blockIdx.z") -> str:
    """Declaration of `local`: `param` advanced to batch `batch` (this block's, blockIdx.z, by
    default); an operand without a batch dimension is shared by every batch."""
    if not batched:
        return f"{ctype}* {local} = {param};"
    return f"{ctype}* {local} = {param} + {batch} * ((long long){matrix_elems});"


def size_guard(gp: GemmProblem) -> str:
    """Launcher line returning early when the output is empty (symbolic sizes only; else "")."""
    dims = [dim_c(d) for d in (gp.M, gp.N, gp.batch) if isinstance(d, str)]
    return f"    if ({' || '.join(f'{d} <= 0' for d in dims)}) return;\n" if dims else ""


DEFAULT_DYNAMIC_SMEM = 48 * 1024   # dynamic shared memory beyond this needs the opt-in attribute


def smem_opt_in(kernel: str, smem: int) -> str:
    """Launcher lines that opt `kernel` in, once, to `smem` bytes of dynamic shared memory when
    that is above the default limit (else "")."""
    if smem <= DEFAULT_DYNAMIC_SMEM:
        return ""
    return (f"    static bool smem_configured = false;   // more than 48 KiB of dynamic shared memory\n"
            f"    if (!smem_configured) {{\n"
            f"        cudaFuncSetAttribute({kernel}, cudaFuncAttributeMaxDynamicSharedMemorySize, {smem});\n"
            f"        smem_configured = true;\n"
            f"    }}\n")


def tiled_launcher(gp: GemmProblem, signature: str, kernel: str, point: Point, threads: int,
                   smem: int) -> str:
    """The launcher body of a block-tiled GEMM: one block per block_m x block_n output tile
    (grid x along N, y along M, z the batch), `smem` bytes of dynamic shared memory (opted in
    once when above the default limit). `kernel`: the qualified kernel name."""
    return (f"{signature} {{\n"
            f"{size_guard(gp)}{smem_opt_in(kernel, smem)}"
            f"    const dim3 grid_dims(({dim_c(gp.N)} + {point['block_n']} - 1) / {point['block_n']}, "
            f"({dim_c(gp.M)} + {point['block_m']} - 1) / {point['block_m']}, {dim_c(gp.batch)});\n"
            f"    {kernel}<<<grid_dims, {threads}, {smem}, stream>>>({kernel_args(gp)});\n}}\n")


def tiled_grid(gp: GemmProblem, point: Point) -> tuple[int, int, int]:
    """`tiled_launcher`'s grid at the problem's hint sizes."""
    return ((gp.hint(gp.N) + point["block_n"] - 1) // point["block_n"],
            (gp.hint(gp.M) + point["block_m"] - 1) // point["block_m"], gp.hint(gp.batch))


def operand_geometry(which: str, op: Operand) -> dict[str, str]:
    """Names for one operand tile: its (outer, inner) indices — inner is contiguous in global
    and shared memory alike — their extents, limits and block origins, and the leading dim."""
    if which == "A":
        outer, inner = ("m", "k") if op.layout == "row" else ("k", "m")
        extent, limit, origin = {"m": "BM", "k": "BK"}, {"m": "M", "k": "K"}, {"m": "m0", "k": "k0"}
        ld = "K" if op.layout == "row" else "M"
    else:
        outer, inner = ("k", "n") if op.layout == "row" else ("n", "k")
        extent, limit, origin = {"k": "BK", "n": "BN"}, {"k": "K", "n": "N"}, {"k": "k0", "n": "n0"}
        ld = "N" if op.layout == "row" else "K"
    return {"outer": outer, "inner": inner, "outer_extent": extent[outer], "inner_extent": extent[inner],
            "outer_limit": limit[outer], "inner_limit": limit[inner], "outer_origin": origin[outer],
            "inner_origin": origin[inner], "ld": ld}


# ---------------------------------------------------------------------------------------------
# Inline-PTX wrappers of the tensor-core kernels

# The wrappers sit between these lines (a CPU emulation swaps them for C++).
PTX_BEGIN = "// ---- inline-PTX wrappers ----"
PTX_END = "// ---- end of inline-PTX wrappers ----"

SMEM_ADDR_HELPER = r"""
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
"""

CP_ASYNC_HELPERS = r"""
// 16-byte global->shared copy that bypasses L1; reads nothing and zero-fills when !valid.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(dst), "l"(src), "r"(valid ? 16 : 0) : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory"); }
"""  # noqa: E501 (one generated line per source line)

# The CUDA-core GEMM's ring copies single elements too (a transposed tile: 4 or 8 bytes each).
CP_ASYNC_ANY_HELPER = r"""
// BYTES (4, 8 or 16) global->shared, asynchronously; reads nothing and zero-fills when !valid.
template <int BYTES>
__device__ __forceinline__ void cp_async_to(void* dst, const void* src, bool valid) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n"
                 :: "r"(static_cast<uint32_t>(__cvta_generic_to_shared(dst))), "l"(src), "n"(BYTES),
                    "r"(valid ? BYTES : 0) : "memory");
}
"""


# ---------------------------------------------------------------------------------------------
# Epilogue

def render_epilogue(gp: GemmProblem) -> str:
    """The fused epilogue's device function (fusion.broadcast_epilogue); empty without one."""
    return broadcast_epilogue(gp.problem, gp.acc_ctype, param_name)


def output_value(gp: GemmProblem, acc: str, row: str, col: str, batch: str = "blockIdx.z") -> str:
    """C expression (compute type) of the output at (batch, row, col) given the accumulator."""
    return broadcast_epilogue_call(gp.problem, acc, row, col, param_name, batch)


def store(gp: GemmProblem, acc: str, row: str, col: str, batch: str = "blockIdx.z") -> str:
    """The statement storing the output at (row, col) of batch `batch`, given `C_b` (the output
    pointer advanced to that batch)."""
    value = store_from_compute(gp.out_dtype, output_value(gp, acc, row, col, batch))
    return f"C_b[(long long)({row}) * N + ({col})] = {value};"


def pair_store(gp: GemmProblem, batch: str = "blockIdx.z") -> str:
    """Statements storing one fp32 accumulator pair `v[0..1]` at columns col, col+1 of `row`
    (col even) of batch `batch` through the epilogue; one 2-wide store when N is a literal even
    number."""
    out = gp.out_dtype
    v0 = output_value(gp, "v[0]", "row", "col", batch)
    v1 = output_value(gp, "v[1]", "row", "col + 1", batch)
    pack = {"f16": "__floats2half2_rn", "bf16": "__floats2bfloat162_rn"}.get(out.name)
    vec_type = {"f16": "__half2", "bf16": "__nv_bfloat162", "f32": "float2"}.get(out.name)
    if vec_type and gp.is_multiple(gp.N, 2):   # col is even and so is N: the pair is in or out together
        value = f"{pack}({v0}, {v1})" if pack else f"make_float2({v0}, {v1})"
        target = f"*reinterpret_cast<{vec_type}*>(&C_b[(long long)row * N + col])"
        return (f"                if (row < M && col < N)\n"
                f"                    {target} = {value};\n")
    return (f"                if (row < M) {{\n"
            f"                    if (col < N) {store(gp, 'v[0]', 'row', 'col', batch)}\n"
            f"                    if (col + 1 < N) {store(gp, 'v[1]', 'row', 'col + 1', batch)}\n"
            f"                }}\n")
