"""What every sketch shares: design tokens and spaces, the rendered-kernel record, and the
frame (header comment, includes, namespace, extern "C" launcher) around a sketch's code.

A sketch is a kernel family (Ansor's "sketch"): `space()` lists its design tokens and the
constraints that prune illegal points, `default_point()` is the heuristic prior's best guess,
and `render()` turns one legal point into CUDA source: it checks legality itself, then calls the
sketch's `_render()`. Sketches never compile or measure.
"""
from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, ClassVar, Iterable, Iterator, TypeVar

from ..arch import ArchSpec
from ..ir.dtypes import DType
from ..ir.graph import Dim, Shape
from ..ir.patterns import Problem
from ..ir.work import Work

Point = dict[str, Any]
Constraint = Callable[[Point], "str | None"]   # returns why the point is illegal, or None
Plan = TypeVar("Plan")


def accepted(plan: Plan | str) -> Plan:
    """The plan of a problem the sketch already accepted (unsupported() returned None); a
    reason in its place means the sketch was called on a problem it refuses: ValueError."""
    if isinstance(plan, str):
        raise ValueError(plan)
    return plan


class IllegalPoint(ValueError):
    """A design point outside its sketch's space: a token off its choices, or a broken constraint."""


class Role(Enum):
    """What a design token controls, as the feedback on a compiled kernel sees it (the blame in
    refine/blame.py moves tokens by role, never by name)."""
    THREADS = "threads"      # the block's shape: threads or warps per block (or per row group)
    TILE = "tile"            # the output tile of a block or warp, staged in shared memory or registers
    WORK = "work"            # outputs or elements each thread owns (registers per thread)
    VECTOR = "vector"        # elements per memory access
    UNROLL = "unroll"        # loads or loop trips in flight per thread
    SPLIT = "split"          # blocks or threads sharing one reduction axis (partials merged later)
    PIPELINE = "pipeline"    # shared-memory buffers or stages in flight
    SMEM = "smem"            # what is kept in shared memory


@dataclass(frozen=True)
class Token:
    """One design decision: a name, its ordered choices, what it controls, and its blame roles
    (empty for a choice of algorithm that no resource feedback points at)."""
    name: str
    choices: tuple[Any, ...]
    doc: str
    roles: tuple[Role, ...]


@dataclass
class DesignSpace:
    tokens: list[Token]
    constraints: list[Constraint] = field(default_factory=list)

    def token(self, name: str) -> Token:
        return next(t for t in self.tokens if t.name == name)

    def violations(self, point: Point) -> list[str]:
        bad = [f"{t.name}={point.get(t.name)!r} is not one of {list(t.choices)}"
               for t in self.tokens if point.get(t.name) not in t.choices]
        return bad or [why for c in self.constraints if (why := c(point))]

    def is_legal(self, point: Point) -> bool:
        return not self.violations(point)

    def require_legal(self, point: Point, sketch: str) -> None:
        """Raise IllegalPoint naming `sketch` and the violations when `point` is illegal."""
        violations = self.violations(point)
        if violations:
            raise IllegalPoint(f"illegal point {point} for {sketch}: {'; '.join(violations)}")

    def points(self) -> Iterator[Point]:
        """Every legal point (the spaces are small enough to enumerate)."""
        names = [t.name for t in self.tokens]
        for values in itertools.product(*(t.choices for t in self.tokens)):
            point = dict(zip(names, values))
            if self.is_legal(point):
                yield point

    def first_legal(self, candidates: Iterable[Point]) -> Point:
        """The first legal one of `candidates` (a prior's choices, best first), else the space's
        first legal point."""
        for point in candidates:
            if self.is_legal(point):
                return point
        return next(self.points())

    def corners(self) -> list[Point]:
        """Legal points whose every token sits at the first or last of its choices."""
        names = [t.name for t in self.tokens]
        ends = [sorted({0, len(t.choices) - 1}) for t in self.tokens]
        out = []
        for idx in itertools.product(*ends):
            point = {n: t.choices[i] for n, t, i in zip(names, self.tokens, idx)}
            if self.is_legal(point):
                out.append(point)
        return out


@dataclass(frozen=True)
class Param:
    """One launcher parameter. role: "input" | "output" | "symbol"."""
    name: str
    c_type: str
    role: str


@dataclass(frozen=True)
class Launch:
    """One kernel launch at the problem's hint sizes, for the cost model and occupancy."""
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    smem_bytes: int          # static + dynamic shared memory per block

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


@dataclass
class RenderedKernel:
    sketch: str
    tokens: Point
    source: str               # self-contained CUDA translation unit text (the generated region)
    kernel_names: list[str]   # qualified names, e.g. "dice_softmax_f32::softmax_f32_kernel"
    launcher: str             # extern "C" host function that launches everything
    params: list[Param]       # the launcher's parameters, in order (the stream comes last)
    launches: list[Launch]
    summary: str              # one line: strategy and key tokens
    arch_suffix: str = ""     # "a": needs the arch-specific target (sm_90a: wgmma, setmaxnreg)
    # For the cost model: operand slices a block keeps in flight through asynchronous copies
    # (cp.async / TMA rings), which hide memory latency that would otherwise need resident warps;
    async_slices: int = 0
    # blocks of the main launch (listed first) that share one output tile along K (split-K), and
    # the bytes of partial results they write to a workspace that a second pass reads back.
    k_splits: int = 1
    workspace_bytes: int = 0
    # the kernel's own model of its DRAM traffic in bytes, at the hint sizes, where it moves more
    # than the problem's minimum (several kernels, workspace, re-reads); None: the minimum
    dram_bytes: float | None = None
    # blocks of the main launch that hand a value down one after another through global memory
    # (a chained scan's tiles along a row): the number of such chains, 0 when blocks are independent
    chains: int = 0
    # the arithmetic and GEMM shape the kernels run where they differ from the problem's (Winograd's
    # transformed products); None: the problem's own
    work: Work | None = None
    # the launch whose grid and occupancy pace the whole; None: the largest
    main_launch: int | None = None
    # bytes of loads each thread of the main launch keeps in flight while it streams its input
    # (vector width x loads issued before the first is used); None: enough to reach DRAM bandwidth
    bytes_in_flight: int | None = None

    def compile_arch(self, arch: str) -> str:
        """The target to compile this kernel for on `arch` ("sm_90" → "sm_90a" when it needs it)."""
        return arch + self.arch_suffix


class Sketch(ABC):
    name: ClassVar[str]       # e.g. "reduction.warp_per_row"
    pattern: ClassVar[str]    # the Problem.pattern this sketch serves

    @abstractmethod
    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        """Why this sketch cannot serve `problem` on `arch`, or None when it can."""

    @abstractmethod
    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace: ...

    @abstractmethod
    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        """A legal point a careful engineer would pick first (the denoiser's prior)."""

    def render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        """`point` as CUDA source; IllegalPoint when it is outside `space()`, so no renderer ever
        sees an illegal point."""
        self.space(problem, arch).require_legal(point, self.name)
        return self._render(problem, arch, point, name)

    @abstractmethod
    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        """Render a point that `render` has checked is legal."""


# ---------------------------------------------------------------------------------------------
# Helpers for renderers

def dim_c(d: Dim) -> str:
    """A dimension as C: a literal, or the launcher/kernel parameter named after the symbol."""
    return str(d) if isinstance(d, int) else d


def numel_c(shape: Shape) -> str:
    """The element count of `shape` as a 64-bit C expression."""
    if not shape:
        return "1LL"
    if all(isinstance(d, int) for d in shape):
        n = 1
        for d in shape:
            n *= int(d)
        return f"{n}LL"
    return " * ".join(f"(long long){dim_c(d)}" for d in shape)


def launcher_params(problem: Problem) -> list[Param]:
    """The launcher's parameters: inputs in declaration order, the output, then the symbols."""
    prog = problem.program
    params = [Param(name, f"const {decl.dtype.c_type}*", "input") for name, decl in prog.inputs.items()]
    params.append(Param(prog.output_name, f"{prog.output.dtype.c_type}*", "output"))
    params += [Param(s, "long long", "symbol") for s in prog.symbol_names()]
    return params


def compute_type(dtype: DType) -> str:
    """The C type arithmetic runs in for `dtype` (halves compute in float)."""
    if dtype.name == "f64":
        return "double"
    if dtype.is_float:
        return "float"
    return dtype.c_type


def load_as_compute(dtype: DType, expr: str) -> str:
    if dtype.name == "f16":
        return f"__half2float({expr})"
    if dtype.name == "bf16":
        return f"__bfloat162float({expr})"
    return expr


def store_from_compute(dtype: DType, expr: str) -> str:
    if dtype.name == "f16":
        return f"__float2half_rn({expr})"
    if dtype.name == "bf16":
        return f"__float2bfloat16_rn({expr})"
    if dtype.name == "bool":
        return f"(bool)({expr})"
    return f"({dtype.c_type})({expr})"


INCLUDES = ("#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
            "#include <cstdint>\n")


def frame(*, name: str, strategy: str, tokens: Point, device_code: str, launcher_code: str) -> str:
    """The generated region's text: a header stating strategy and tokens, includes, the device
    code inside `namespace dice_<name>` (so several regions can share one file), and the
    extern "C" launcher (callable from C++, ctypes and the verification runner)."""
    token_text = ", ".join(f"{k}={v}" for k, v in tokens.items())
    header = (f"// DICE kernel `{name}`: {strategy}\n"
              f"// design tokens: {token_text}\n")
    namespace = f"namespace dice_{name} {{\n\n{device_code.strip()}\n\n}}  // namespace dice_{name}\n"
    return f"{header}{INCLUDES}\n{namespace}\n{launcher_code.strip()}\n"


def launcher_signature(name: str, params: list[Param]) -> str:
    args = ", ".join(f"{p.c_type} {p.name}" for p in params)
    return f'extern "C" void {name}_launch({args}, cudaStream_t stream)'
