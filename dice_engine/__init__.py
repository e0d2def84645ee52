"""DICE engine: intents in CUDA files → verified, hardware-adapted kernels; diagnostics for any CUDA code.

    from dice_engine import CUDAGenerator, check_source
    result = CUDAGenerator(device="a100").generate("y = softmax(x, dim=1); x: f32[4096, 1024]")
    findings = check_source(open("kernel.cu").read(), "kernel.cu")
"""
from .analysis import Finding, check_source
from .api import CUDAGenerator, FileReport, GenerationError, GenerationResult, generate_file
from .compile import CompileResult, NvccNotFound, compile_cuda
from .intent import IntentError, parse_intent

__all__ = ["CUDAGenerator", "CompileResult", "FileReport", "Finding", "GenerationError", "GenerationResult",
           "IntentError", "NvccNotFound", "check_source", "compile_cuda", "generate_file", "parse_intent"]
