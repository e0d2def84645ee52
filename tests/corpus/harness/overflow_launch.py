"""Dynamic checks for the corpus's `overflow` kernels: run each one past 2^31 elements on a GPU.

A wrapped 32-bit index shows up in one of three ways: the launch faults (a negative offset leaves
the allocation), elements past the wrap are never written (the guard compares a wrapped value),
or the wrong elements are written. The generated host program fills the buffers on the device
from a hash of the element index, launches the kernel at a size past the wrap, and compares
sampled elements on both sides of 2^31 (and 2^32) with what a 64-bit-indexed kernel would leave.

The launch geometry and the expected result differ per kernel, so each file has a hand-written
`Launch` below; a file of the corpus without one is reported as unchecked.
"""
from __future__ import annotations

from dataclasses import dataclass

WRAP = 1 << 31


@dataclass(frozen=True)
class Buffer:
    name: str
    ctype: str             # float, unsigned char or long long
    count: str             # C expression (elements)
    poisoned: bool = False  # output-only: filled with a poison pattern instead of hashed values


@dataclass(frozen=True)
class Launch:
    buffers: tuple[Buffer, ...]
    grid: str
    block: str
    args: str               # the kernel's argument list, in C, over the buffer names
    checked: str            # the buffer whose elements are sampled
    expected: str           # C expression of its correct value at element k (init_<name>(k) ...)


_TOTAL_4G = "((1ull << 32) + (1ull << 20))"
_TOTAL_2G = "((1ull << 31) + (1ull << 20))"

LAUNCHES: dict[str, Launch] = {
    "ovf_batch_pointer_offset.cu": Launch(
        (Buffer("data", "float", "(size_t)IMAGES * ROWS * COLS"), Buffer("gain", "float", "IMAGES")),
        "dim3(1024, IMAGES)", "dim3(256)", "data, gain, ROWS, COLS", "data",
        "init_data(k) * init_gain(k / ((size_t)ROWS * COLS))"),
    "ovf_batch_offset.cu": Launch(
        (Buffer("x", "float", "(size_t)BATCH * ROWS * COLS"),),
        "dim3(COLS / 256, ROWS, BATCH)", "dim3(256)", "x", "x",
        "init_x(k) > 0.0f ? init_x(k) : 0.0f"),
    "ovf_constant_extents.cu": Launch(
        (Buffer("img", "unsigned char", "(size_t)WIDTH * HEIGHT"),),
        "dim3(WIDTH / 32, HEIGHT / 8)", "dim3(32, 8)", "img", "img",
        "(unsigned char)(255 - init_img(k))"),
    "ovf_grid_stride_int.cu": Launch(
        (Buffer("out", "float", _TOTAL_2G, poisoned=True),),
        "dim3(132 * 8)", "dim3(256)", f"out, 1.5f, (long long){_TOTAL_2G}", "out", "1.5f"),
    "ovf_int_index_size_t_n.cu": Launch(
        (Buffer("in", "float", _TOTAL_2G), Buffer("out", "float", _TOTAL_2G, poisoned=True)),
        f"dim3((unsigned)(({_TOTAL_2G} + 255) / 256))", "dim3(256)", f"in, out, (size_t){_TOTAL_2G}",
        "out", "init_in(k)"),
    "ovf_long_long_product.cu": Launch(
        (Buffer("out", "long long", _TOTAL_4G, poisoned=True),),
        f"dim3((unsigned)(({_TOTAL_4G} + 255) / 256))", "dim3(256)", f"out, (long long){_TOTAL_4G}",
        "out", "(long long)k"),
    "ovf_unsigned_vec4.cu": Launch(
        (Buffer("x", "float", _TOTAL_4G),),
        f"dim3((unsigned)(({_TOTAL_4G} / 4 + 255) / 256))", "dim3(256)", f"x, (size_t){_TOTAL_4G}",
        "x", "0.0f"),
    "ovf_widen_after_multiply.cu": Launch(
        (Buffer("x", "float", _TOTAL_4G),),
        f"dim3((unsigned)(({_TOTAL_4G} + 255) / 256))", "dim3(256)", f"x, 2.0f, (size_t){_TOTAL_4G}",
        "x", "init_x(k) * 2.0f"),
    # the sizes these kernels get from host constants, as their own host code passes them
    "ovf_host_constant_extents.cu": Launch(
        (Buffer("m", "float", "120000ull * 40000"), Buffer("row_scale", "float", "120000")),
        "dim3((40000 + 31) / 32, (120000 + 7) / 8)", "dim3(32, 8)", "m, row_scale, 120000, 40000", "m",
        "init_m(k) * init_row_scale(k / 40000)"),
    "ovf_wrapper_host_sizes.cu": Launch(
        (Buffer("m", "float", "120000ull * 40000"), Buffer("bias", "float", "40000")),
        "dim3(1, 120000)", "dim3(256)", "m, bias, 120000, 40000", "m", "init_m(k) + init_bias(k % 40000)"),
    "ovf_flat_4d_grid.cu": Launch(
        (Buffer("x", "float", "(size_t)N * C * H * W"), Buffer("bias", "float", "C")),
        "dim3(W / 256, H, N * C)", "dim3(256)", "x, bias", "x",
        "init_x(k) + init_bias((k / ((unsigned long long)H * W)) % C)"),
    "ovf_grid_stride_4d_params.cu": Launch(
        (Buffer("x", "float", "16ull * 64 * 2048 * 2048"),),
        "dim3(132 * 16)", "dim3(256)", "x, 16, 64, 2048, 2048", "x", "init_x(k) > 0.0f ? init_x(k) : 0.0f"),
    "ovf_batched_loop_host_sizes.cu": Launch(
        (Buffer("x", "float", "4096ull << 20"), Buffer("y", "float", "4096ull << 20")),
        "dim3((1 << 20) / 256)", "dim3(256)", "x, y, 2.0f, 4096, 1 << 20", "y",
        "fmaf(2.0f, init_x(k), init_y(k))"),
}

_INIT = {   # device-and-host value of element k before the launch: a hash, never all zeros
    "float": "(float)((k * 2654435761ull >> 7) % 1000) / 1000.0f - 0.5f",
    "unsigned char": "(unsigned char)((k * 2654435761ull >> 7) % 251)",
    "long long": "(long long)(k * 2654435761ull >> 7)",
}
_POISON = {"float": "-1e30f", "unsigned char": "(unsigned char)77", "long long": "-7ll"}


def host_program(include: str, kernel: str, launch: Launch) -> str:
    """A translation unit that runs `kernel` past the wrap and prints one verdict line."""
    inits, allocs, fills = [], [], []
    for b in launch.buffers:
        value = _POISON[b.ctype] if b.poisoned else _INIT[b.ctype]
        inits.append(f"__host__ __device__ {b.ctype} init_{b.name}(unsigned long long k) "
                     f"{{ return {value}; }}\n"
                     f"__global__ void fill_{b.name}({b.ctype}* p, size_t n) {{\n"
                     f"    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n;"
                     f" k += (size_t)gridDim.x * blockDim.x) p[k] = init_{b.name}(k);\n}}")
        allocs.append(f"    size_t n_{b.name} = {b.count};\n    {b.ctype}* {b.name};\n"
                      f"    if (cudaMalloc(&{b.name}, n_{b.name} * sizeof({b.ctype})) != cudaSuccess) "
                      f"{{ printf(\"VERDICT unchecked: cannot allocate {b.name}\\n\"); return 0; }}")
        fills.append(f"    fill_{b.name}<<<4096, 256>>>({b.name}, n_{b.name});")
    c, ctype = launch.checked, next(b.ctype for b in launch.buffers if b.name == launch.checked)
    return f"""#include "{include}"
#include <cstdio>

{chr(10).join(inits)}
__host__ __device__ {ctype} expected_value(unsigned long long k) {{ return {launch.expected}; }}

int main() {{
{chr(10).join(allocs)}
{chr(10).join(fills)}
    cudaDeviceSynchronize();
    {kernel}<<<{launch.grid}, {launch.block}>>>({launch.args});
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {{
        printf("VERDICT fault: %s\\n", cudaGetErrorString(err));
        return 0;
    }}
    unsigned long long n = n_{c};
    // below: clear of [0, 2^20), where a wrapped index may land a second time
    unsigned long long below[] = {{(1ull << 30) + 12345, {WRAP}ull - 3}};
    unsigned long long above[] = {{{WRAP}ull + 5, {WRAP}ull + 123457, n - 1}};
    for (unsigned long long k : below) {{
        {ctype} got; cudaMemcpy(&got, {c} + k, sizeof got, cudaMemcpyDeviceToHost);
        if (got != expected_value(k)) {{
            printf("VERDICT unchecked: element %llu below 2^31 is wrong too (harness)\\n", k);
            return 0;
        }}
    }}
    for (unsigned long long k : above) {{
        {ctype} got; cudaMemcpy(&got, {c} + k, sizeof got, cudaMemcpyDeviceToHost);
        if (got != expected_value(k)) {{
            printf("VERDICT wrong: element %llu holds %g, a 64-bit index gives %g\\n", k,
                   (double)got, (double)expected_value(k));
            return 0;
        }}
    }}
    printf("VERDICT correct: sampled elements past 2^31 hold the right values\\n");
    return 0;
}}
"""
