"""The general lowering path: any program the IR expresses → a plan of kernels behind one
`extern "C"` launcher (see docs/architecture.md)."""
from .sketch import GeneralLowering

__all__ = ["GeneralLowering"]
