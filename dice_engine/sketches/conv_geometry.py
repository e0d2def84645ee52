"""A convolution of any rank, grouped or transposed, as the implicit GEMMs its kernels run.

Every rank is padded to three spatial dimensions (leading extents of 1). A forward convolution
is one GEMM per group: M = N*OD*OH*OW, N = Cout/groups, K = Cin/groups * KD*KH*KW. A transposed
convolution is gathered (output-stationary): output o reads input (o + pad - k*dil) / stride
for the taps k where that divides exactly. Per dimension those taps depend only on the output's
stride phase (o + pad) mod stride, so the outputs split into phases, each a dense GEMM over only
its own taps: no multiply-add is spent on a skipped tap.

Per dimension and phase (`Axis`): outputs o = o0 + o_step*j for j < count, taps
k = k0 + k_step*a for a < taps, read input i = i0 + j*j_mul + a*a_mul.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product

from ..ir.graph import Dim
from ..ir.patterns import Problem

HINT = 64   # batch assumed for an unbound batch symbol when sizing launches


@dataclass(frozen=True)
class Axis:
    o0: int
    o_step: int
    count: int
    k0: int
    k_step: int
    taps: int
    i0: int
    j_mul: int
    a_mul: int


def _forward_axis(out: int, kernel: int, stride: int, pad: int, dil: int) -> list[Axis]:
    return [Axis(0, 1, out, 0, 1, kernel, -pad, stride, dil)]


def _transposed_axes(out: int, kernel: int, stride: int, pad: int, dil: int) -> list[Axis]:
    """One `Axis` per stride phase that holds outputs."""
    g = math.gcd(stride, dil)
    k_step = stride // g
    axes = []
    for phase in range(stride):
        o0 = (phase - pad) % stride
        if o0 >= out:
            continue
        count = -(-(out - o0) // stride)
        k0 = next((k for k in range(kernel) if (o0 + pad - k * dil) % stride == 0), None)
        if k0 is None:    # no tap lands on these outputs: they hold only the bias
            axes.append(Axis(o0, stride, count, 0, 1, 0, 0, 1, 0))
            continue
        taps = len(range(k0, kernel, k_step))
        i0 = (o0 + pad - k0 * dil) // stride
        axes.append(Axis(o0, stride, count, k0, k_step, taps, i0, 1, -(dil // g)))
    return axes


class ConvGeometry:
    """Extents, groups and phases of the problem's convolution (the anchor)."""

    def __init__(self, problem: Problem):
        anchor = problem.anchor
        assert anchor is not None
        x, w = anchor.args[0], anchor.args[1]
        self.op = anchor.op
        self.transposed = anchor.op.startswith("conv_transpose")
        self.rank = x.rank - 2
        pad3 = (1,) * (3 - self.rank)
        self.batch: Dim = x.shape[0]
        self.channels = int(x.shape[1])
        self.out_channels = int(anchor.shape[1])
        self.groups = int(anchor.attr("groups", 1))
        self.channels_g = self.channels // self.groups
        self.out_channels_g = self.out_channels // self.groups
        self.in_size = pad3 + tuple(int(d) for d in x.shape[2:])
        self.out_size = pad3 + tuple(int(d) for d in anchor.shape[2:])
        self.kernel = pad3 + tuple(int(d) for d in w.shape[2:])
        self.stride = pad3 + tuple(anchor.attr("stride"))
        self.padding = (0,) * (3 - self.rank) + tuple(anchor.attr("padding"))
        self.dilation = pad3 + tuple(anchor.attr("dilation"))
        self.output_padding = (0,) * (3 - self.rank) + tuple(anchor.attr("output_padding", (0,) * self.rank))
        self.has_bias = len(anchor.args) == 3
        make = _transposed_axes if self.transposed else _forward_axis
        per_dim = [make(*args) for args in zip(self.out_size, self.kernel, self.stride, self.padding,
                                                self.dilation)]
        self.phases: list[tuple[Axis, Axis, Axis]] = [tuple(p) for p in product(*per_dim)]  # type: ignore[misc]
        self.batch_hint = problem.program.concrete_shape((self.batch,), HINT)[0]

    @property
    def kernel_volume(self) -> int:
        return math.prod(self.kernel)

    def phase_m(self, phase: tuple[Axis, Axis, Axis]) -> int:
        return self.batch_hint * math.prod(a.count for a in phase)

    def phase_k(self, phase: tuple[Axis, Axis, Axis]) -> int:
        return self.channels_g * math.prod(a.taps for a in phase)

    @property
    def max_m(self) -> int:
        return max(self.phase_m(p) for p in self.phases)

    def features(self) -> str:
        dims = "x".join
        text = [f"{self.rank}-D", f"stride {dims(map(str, self.stride[3 - self.rank:]))}",
                f"padding {dims(map(str, self.padding[3 - self.rank:]))}",
                f"dilation {dims(map(str, self.dilation[3 - self.rank:]))}"]
        if self.groups > 1:
            text.append(f"{self.groups} groups")
        if self.transposed:
            text.append(f"{len(self.phases)} stride phase(s)")
            if any(self.output_padding):
                text.append(f"output_padding {dims(map(str, self.output_padding[3 - self.rank:]))}")
        return ", ".join(text + ["bias"] * self.has_bias)


MAX_DEPTHWISE_TAPS = 64   # kernel taps a depthwise thread keeps in registers


def depthwise_direct(geo: ConvGeometry) -> bool:
    """A forward convolution of at most two spatial dimensions with one input channel per group
    and a small kernel: `conv.depthwise`'s stencil serves it (a GEMM of N = channel multiplier
    would leave nearly every lane of a tile idle)."""
    return (not geo.transposed and geo.rank <= 2 and geo.channels_g == 1
            and geo.kernel_volume <= MAX_DEPTHWISE_TAPS and geo.out_channels_g < 8)
