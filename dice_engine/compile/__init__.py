"""nvcc/ptxas invocation: errors and warnings as data, per-kernel resources, a disk cache."""
from .messages import CompileMessage
from .nvcc import CompileResult, compile_cuda
from .resources import KernelResources, kernel_base_name
from .toolchain import NvccNotFound, find_nvcc, nvcc_found

__all__ = ["CompileMessage", "CompileResult", "KernelResources", "NvccNotFound", "compile_cuda",
           "find_nvcc", "kernel_base_name", "nvcc_found"]
