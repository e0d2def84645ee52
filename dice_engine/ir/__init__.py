"""Tensor IR: dtypes, nodes, programs, operator rules, the reference evaluator and pattern classification."""
from .dtypes import DType, parse_dtype
from .graph import Dim, Node, Program, Shape, TensorDecl
from .ops import OpError, make

__all__ = ["DType", "Dim", "Node", "OpError", "Program", "Shape", "TensorDecl", "make", "parse_dtype"]
