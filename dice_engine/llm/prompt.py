"""What the model is told: the intent, PyTorch's meaning of it, the exact launcher to write (the
region ABI), the target's figures and the rules; then, each repair round, what went wrong."""
from __future__ import annotations

from ..arch import ArchSpec
from ..ir.graph import Node, Program
from ..sketches.base import Param, launcher_signature
from .backend import Message

RULES = """Rules:
- Write one self-contained CUDA C++ translation unit: includes, __global__ kernel(s) and the launcher.
- The launcher must have exactly the signature given, with C linkage, and launch everything on
  `stream` (the stream it is given; never the default stream explicitly, never another stream).
- No host synchronisation (cudaDeviceSynchronize, cudaStreamSynchronize, cudaMemcpy) in the launcher.
- No allocation or freeing (cudaMalloc, cudaFree, new, malloc) in the launcher or the kernels.
- No state kept across calls: no static or __device__ buffers holding results, no caching keyed on
  pointers; the inputs are read-only; compute at (at least) the precision the tensors have.
- Do not define or replace any CUDA runtime or driver function.
- Tensors are contiguous, row-major; sizes given as symbols arrive as `long long` parameters.
Reply with the code in one ```cuda fenced block and nothing else."""


def torch_reference(program: Program) -> str:
    """The intent as PyTorch code: the function a correct kernel must agree with."""
    args = ", ".join(program.inputs)
    lines = [f"def reference({args}):"]
    lines += [f"    # {name}: {decl.dtype.torch}{list(decl.shape)}" for name, decl in program.inputs.items()]
    lines.append(f"    return {_torch_text(program.output)}  # {program.output.dtype.torch}"
                 f"{list(program.output.shape)}")
    return "\n".join(lines)


def _torch_text(node: Node) -> str:
    if node.op == "input":
        return node.name or "?"
    if node.op == "const":
        return repr(node.value)
    if node.op == "torch":
        return node.attr("expr")
    args = ", ".join(_torch_text(a) for a in node.args)
    extra = "".join(f", {k}={v!r}" for k, v in node.attrs if not hasattr(v, "torch"))
    return f"{node.op}({args}{extra})"


def launcher_text(name: str, params: list[Param]) -> str:
    return launcher_signature(name, params)


def arch_figures(spec: ArchSpec) -> str:
    parts = [f"{spec.name} ({spec.gpu_name})"]
    for label, attr in (("SMs", "sms"), ("max threads per SM", "max_threads_per_sm"),
                        ("registers per SM", "regs_per_sm"), ("shared memory per SM (bytes)", "smem_per_sm"),
                        ("max shared memory per block (bytes)", "smem_per_block_optin"),
                        ("DRAM GB/s", "dram_gbps")):
        value = getattr(spec, attr, None)
        if value:
            parts.append(f"{label}: {value}")
    return "; ".join(parts)


def first_messages(program: Program, spec: ArchSpec, name: str, params: list[Param]) -> list[Message]:
    intent = " ".join(program.text.split())
    user = (f"Write a CUDA kernel for this DICE intent:\n    {intent}\n\n"
            f"Its meaning is this PyTorch code (the reference every output element is checked against):\n"
            f"```python\n{torch_reference(program)}\n```\n\n"
            f"The launcher to write, exactly:\n```cuda\n{launcher_text(name, params)};\n```\n"
            "Parameters: inputs first (device pointers), then the output, then size symbols, "
            "then the stream.\n"
            f"Target: {arch_figures(spec)}.\n\n{RULES}")
    return [{"role": "system", "content": "You are an expert CUDA performance engineer. You write correct, "
             "fast kernels and reply with code only."},
            {"role": "user", "content": user}]


def repair_message(problems: list[str]) -> Message:
    """The feedback of one round: compiler errors, findings, mismatches, time against PyTorch."""
    listed = "\n".join(f"- {p}" for p in problems)
    return {"role": "user", "content": f"That kernel was checked and has these problems:\n{listed}\n\n"
            "Fix them. Reply with the whole corrected translation unit in one ```cuda block."}
