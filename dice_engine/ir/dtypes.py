"""Element types of the tensor IR and PyTorch-style type promotion."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DType:
    name: str          # canonical intent spelling: f32, bf16, ...
    c_type: str        # CUDA C++ storage type
    numpy: str         # numpy dtype used by the reference evaluator ("bfloat16" is emulated)
    torch: str         # torch attribute name
    size: int          # bytes per element
    kind: str          # "float" | "int" | "bool"

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_low_precision(self) -> bool:
        return self.name in ("f16", "bf16")

    def __str__(self) -> str:
        return self.name


F64 = DType("f64", "double", "float64", "float64", 8, "float")
F32 = DType("f32", "float", "float32", "float32", 4, "float")
F16 = DType("f16", "__half", "float16", "float16", 2, "float")
BF16 = DType("bf16", "__nv_bfloat16", "float32", "bfloat16", 2, "float")
I64 = DType("i64", "long long", "int64", "int64", 8, "int")
I32 = DType("i32", "int", "int32", "int32", 4, "int")
U8 = DType("u8", "unsigned char", "uint8", "uint8", 1, "int")
BOOL = DType("bool", "bool", "bool", "bool", 1, "bool")

DTYPES: dict[str, DType] = {d.name: d for d in (F64, F32, F16, BF16, I64, I32, U8, BOOL)}

ALIASES: dict[str, DType] = {
    **DTYPES,
    "fp64": F64, "float64": F64, "double": F64,
    "fp32": F32, "float32": F32, "float": F32,
    "fp16": F16, "float16": F16, "half": F16,
    "bfloat16": BF16, "bf16": BF16,
    "int64": I64, "long": I64, "int32": I32, "int": I32,
    "uint8": U8, "byte": U8, "boolean": BOOL,
}


def parse_dtype(text: str) -> DType | None:
    """The dtype named by `text` (case-insensitive), or None."""
    return ALIASES.get(text.strip().lower())


_RANK = {"bool": 0, "u8": 1, "i32": 2, "i64": 3, "f16": 4, "bf16": 4, "f32": 5, "f64": 6}


def promote(a: DType, b: DType) -> DType:
    """Result dtype of a binary op on two tensors, as torch.result_type does."""
    if a == b:
        return a
    if {a.name, b.name} == {"f16", "bf16"}:
        return F32
    return a if _RANK[a.name] >= _RANK[b.name] else b


def promote_with_scalar(t: DType, scalar_is_float: bool) -> DType:
    """Tensor op Python scalar: the tensor's dtype wins unless a float scalar meets an integer tensor."""
    if scalar_is_float and not t.is_float:
        return F32
    return t
