"""The tree helpers the analyses share: literals, constants, struct layouts, launch sites, the
modeled block."""
from __future__ import annotations

import pytest

from dice_engine.analysis.simt import block_model
from dice_engine.analysis.syntax import const_eval, file_facts, float_literal_type, functions, int_literal, \
    new_parser


@pytest.mark.parametrize("literal, kind", [("0.5", "double"), ("1e-5", "double"), ("2.", "double"),
                                           ("0.5f", "float"), ("1E3F", "float"), ("3", None),
                                           ("0x1F", None), ("0x1p-3", "double")])
def test_float_literal_types(literal, kind):
    assert float_literal_type(literal) == kind


def test_integer_literals_and_constant_expressions():
    assert [int_literal(s) for s in ("42", "0x20", "0b101", "017", "1'000", "7u", "9ULL")] == \
        [42, 32, 5, 15, 1000, 7, 9]
    consts = {"TILE": 32, "ROWS": 8}
    assert const_eval("(TILE + 1) * ROWS", consts) == 264
    assert const_eval("1 << 20", consts) == 1 << 20
    assert const_eval("(size_t)TILE * TILE", consts) == 1024
    assert const_eval("(long long)TILE * (unsigned int)ROWS", consts) == 32 * 8
    assert const_eval("TILE / 0", consts) is None
    assert const_eval("UNKNOWN + 1", consts) is None


def _facts(src: str):
    tree = new_parser().parse(src.encode())
    fns = functions(tree.root_node)
    return fns, file_facts(tree.root_node, fns)


def test_struct_layouts_follow_c_alignment():
    _, facts = _facts("struct A { char c; double d; float f; };\nstruct B { float3 p; float w; };\n")
    assert facts.sizeof("A") == 24 and facts.field_offset("A", "d") == (8, 8)
    assert facts.sizeof("B") == 16 and facts.field_offset("B", "w") == (12, 4)


def test_block_model_reads_launch_sites_bounds_and_tiles():
    fns, facts = _facts("""\
#define T 16
__global__ void a(float* x) { x[threadIdx.x + threadIdx.y] = 0; }
__global__ void __launch_bounds__(128) b(float* x) { x[threadIdx.x] = 0; }
__global__ void c(float* x) { __shared__ float t[T][T + 1]; t[threadIdx.y][threadIdx.x] = x[0]; }
__global__ void d(float* x) { x[threadIdx.x] = 0; }
void host(float* x) { dim3 block(T, 4); a<<<1, block>>>(x); }
""")
    by = {f.name: f for f in fns}
    assert block_model(by["a"], facts).dims == (16, 4, 1) and block_model(by["a"], facts).known
    assert block_model(by["b"], facts).dims == (128, 1, 1)
    assert block_model(by["c"], facts).dims == (16, 16, 1)
    assert block_model(by["d"], facts).dims == (256, 1, 1) and not block_model(by["d"], facts).known


def test_block_model_reads_namespace_qualified_launch_constants():
    fns, facts = _facts("""\
namespace kn {
constexpr int kTile = 16, kSplit = 32;
__global__ void k(float* x) { x[threadIdx.x + threadIdx.y] = 0; }
}
void host(float* x) { const dim3 grid(4), block(kn::kTile, kn::kSplit); kn::k<<<grid, block>>>(x); }
""")
    model = block_model(fns[0], facts)
    assert model.dims == (16, 32, 1) and model.known


def test_macros_are_scoped_by_undef_and_if_branches_on_constants():
    fns, facts = _facts("""#define ROWS 8
__global__ void rows_kernel(float* x) { x[threadIdx.y * 32 + threadIdx.x] = 0.0f; }
void launch_rows(float* x) { rows_kernel<<<16, dim3(32, ROWS)>>>(x); }
#undef ROWS
namespace big { constexpr int ROWS = 8192; }
#define WIDE 1
#if WIDE && !defined(NARROW)
#define TILE 64
#elif 1
#define TILE 16
#else
#define TILE 8
#endif
#ifndef TILE
#define TILE 4
#endif
#if ROWS > 100
#define PICK 1
#else
#define PICK 2
#endif
""")
    assert facts.block_sizes["rows_kernel"] == (32, 8, 1)          # the macro, not big::ROWS
    kernel = next(f for f in fns if f.name == "rows_kernel")
    assert facts.at(kernel.node.start_byte).constants["ROWS"] == 8
    assert facts.constants["ROWS"] == 8192 and facts.constants["TILE"] == 64
    assert facts.constants["PICK"] == 2        # `#if` sees macros only: ROWS is undefined there


def test_unknown_if_conditions_keep_every_branch_and_launch_bounds_take_named_constants():
    fns, facts = _facts("""#if SOME_FLAG_FROM_THE_BUILD
#define BLOCK 128
#else
#define BLOCK 256
#endif
#define SOME 1
constexpr int THREADS = 256;
__global__ void __launch_bounds__(THREADS, 1) k(float* y) { y[threadIdx.x] = 0.0f; }
""")
    assert facts.constants["BLOCK"] == 256     # undefined in `#if` is 0: the #else is compiled
    (k,) = fns
    assert k.launch_bounds is None and k.max_threads(facts.constants) == 256
    assert block_model(k, facts).dims == (256, 1, 1)


def test_macros_the_analyses_expand():
    """Only whole double literals are double macros; only call-free, assignment-free arithmetic
    bodies are expanded (a self-referencing or variadic macro is left alone)."""
    _, facts = _facts("#define C0 0.5\n#define C1 (-1e-6)\n#define CF 0.5f\n#define N 8\n"
                      "#define PAD(i) ((i) + ((i) >> 5))\n#define REC(x) REC(x)\n"
                      "#define SET(a) a = 1\n#define CMP(a, b) ((a) <= (b))\n#define V(...) (__VA_ARGS__)\n"
                      "#undef C1\n")
    assert facts.double_macros == {"C0": "0.5"}
    assert facts.arith_macros == {"PAD": (("i",), "((i) + ((i) >> 5))"),
                                  "CMP": (("a", "b"), "((a) <= (b))")}
