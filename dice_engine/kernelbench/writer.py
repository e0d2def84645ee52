"""The ModelNew file: the task's code unchanged, the kernels' CUDA source, and a `ModelNew`
whose forward allocates with `torch.empty` and launches those kernels on the current stream.

`ModelNew` subclasses the task's `Model`, so its constructor signature, its parameters and
buffers, their order and their initialisation are the task's own: seeded, both hold equal
weights. Only `forward` is replaced. The CUDA source is compiled on first use with nvcc into a
shared library cached under ~/.cache/dice/kernelbench (DICE_CACHE_DIR moves it), and its
`extern "C"` launchers are called through ctypes with raw pointers and the current stream.
"""

from __future__ import annotations

import math
import re

from .generate import ServedKernel
from .lower import Lowered
from .plan import Buffer

# Instructions that exist only on the arch-specific target (sm_90a), as the wgmma sketch's
# RenderedKernel.arch_suffix says (GenerationResult does not carry it).
_ARCH_SPECIFIC = re.compile(r"\b(wgmma|setmaxnreg)\b")

RUNTIME = '''
def _nvcc() -> str:
    for candidate in (os.environ.get("NVCC"), shutil.which("nvcc"),
                      os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise RuntimeError("ModelNew compiles its CUDA kernels on first use and needs the CUDA toolkit's "
                       "nvcc: put it on PATH or set CUDA_HOME (or NVCC)")


_LIBRARY = None


def _library() -> ctypes.CDLL:
    """The kernels as a shared library, compiled once per source and arch and cached on disk."""
    global _LIBRARY
    if _LIBRARY is None:
        key = hashlib.sha256((CUDA_ARCH + CUDA_SOURCE).encode()).hexdigest()[:24]
        root = os.environ.get("DICE_CACHE_DIR", os.path.expanduser("~/.cache/dice"))
        cache = os.path.join(root, "kernelbench")
        os.makedirs(cache, exist_ok=True)
        path = os.path.join(cache, f"{key}.so")
        if not os.path.exists(path):
            with tempfile.TemporaryDirectory() as work:
                src = os.path.join(work, "kernels.cu")
                with open(src, "w") as f:
                    f.write(CUDA_SOURCE)
                target = (f"-gencode=arch=compute_{CUDA_ARCH[3:]},code={CUDA_ARCH}" if CUDA_ARCH.endswith("a")
                          else f"-arch={CUDA_ARCH}")
                done = subprocess.run([_nvcc(), "-O3", "-shared", "-Xcompiler", "-fPIC", target, src,
                                       "-o", os.path.join(work, "k.so")], capture_output=True, text=True,
                                      timeout=600)
                if done.returncode != 0:
                    log = (done.stderr.strip() or done.stdout)[-2000:]
                    raise RuntimeError("nvcc failed on ModelNew's kernels: " + log)
                os.replace(os.path.join(work, "k.so"), path)
        lib = ctypes.CDLL(path)
        for name, count in KERNELS.items():
            launch = getattr(lib, f"{name}_launch")
            launch.argtypes = [ctypes.c_void_p] * (count + 1)   # tensors, then the stream
            launch.restype = None
        _LIBRARY = lib
    return _LIBRARY


def _ptr(t: torch.Tensor, shape: tuple, dtype: torch.dtype, what: str) -> ctypes.c_void_p:
    """The tensor's device pointer, after checking it is what the kernels were generated for."""
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{what} must be a tensor")
    if tuple(t.shape) != shape or t.dtype != dtype:
        raise ValueError(f"{what}: the kernels were generated for {dtype} {list(shape)}, "
                         f"got {t.dtype} {list(t.shape)}; run dice kernelbench again for other shapes")
    if not t.is_cuda:
        raise ValueError(f"{what} must be a CUDA tensor")
    if not t.is_contiguous():
        raise ValueError(f"{what} must be contiguous")
    return ctypes.c_void_p(t.data_ptr())
'''


def write_model_new(lowered: Lowered, served: list[ServedKernel], arch: str, notes: list[str]) -> str:
    task = lowered.traced.task
    sources = "\n".join(k.result.source for k in served)
    cuda_arch = arch + ("a" if _ARCH_SPECIFIC.search(sources) and not arch.endswith("a") else "")
    listing = "\n".join(
        f"    {k.name:<22} {' + '.join(k.fused) or 'copy':<40} {k.result.sketch}" for k in served
    )
    kernels = ", ".join(f'"{k.name}": {len(k.inputs) + 1}' for k in served)
    source_literal = _raw_string(sources)
    differences = "".join(f"\nNote: {n}." for n in notes)
    return f'''"""ModelNew for {task.path.name}, written by DICE (`dice kernelbench`) for {cuda_arch}.

Kernels, in the order forward launches them (operations each one computes, sketch):
{listing}

The task's code follows unchanged. ModelNew subclasses its Model, so the constructor, the
parameters and buffers and their initialisation are the task's own; only forward is new: it
allocates its results with torch.empty and does all arithmetic in the kernels of CUDA_SOURCE,
launched on the current CUDA stream. CUDA_SOURCE is compiled with nvcc on first use and cached
under ~/.cache/dice/kernelbench (DICE_CACHE_DIR moves it).{differences}
"""
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile

import torch

# ---- the task, as given ------------------------------------------------------------------------
{task.source.rstrip()}


# ---- the kernels -------------------------------------------------------------------------------
CUDA_ARCH = "{cuda_arch}"
KERNELS = {{{kernels}}}   # launcher name: tensor arguments (inputs, then the output)
CUDA_SOURCE = {source_literal}
{RUNTIME}

class ModelNew(Model):
{_forward(lowered, served)}
'''


def _forward(lowered: Lowered, served: list[ServedKernel]) -> str:
    params = lowered.traced.forward_params
    signature = ", ".join(["self", *params])
    used = {_base(b, lowered).name for k in served for b in k.inputs}
    user = [b for b in lowered.buffers.values() if b.kind == "input"]
    device = user[0].storage if user else next(iter(lowered.buffers.values())).storage
    lines = [f"    def forward({signature}):"]
    # Non-tensor arguments were folded into the kernels as traced: other values are refused.
    for name, value in lowered.traced.scalars.items():
        message = f"the kernels were generated for {name}={value!r}, got {{{name}!r}}"
        lines += [f"        if {name} != {value!r}:", f'            raise ValueError(f"{message}")']
    # The tensors the kernels read, checked first: forward's inputs and the module's own tensors.
    for b in lowered.buffers.values():
        if b.kind != "temp" and b.name in used:
            lines.append(
                f'        {b.name} = _ptr({b.storage}, {b.shape}, torch.{b.dtype.torch}, "{b.storage}")'
            )
    lines += [
        "        lib = _library()",
        f"        device = {device}.device",
        "        stream = ctypes.c_void_p(torch.cuda.current_stream(device).cuda_stream)",
    ]
    for k in served:
        out = k.plan.out
        lines.append(f"        # {' + '.join(k.fused) or 'copy'}")
        lines.append(
            f"        {out.name} = torch.empty({out.shape}, dtype=torch.{out.dtype.torch}, device=device)"
        )
        args = [_pointer(b, lowered) for b in k.inputs] + [
            f"ctypes.c_void_p({out.name}.data_ptr())",
            "stream",
        ]
        lines.append(f"        lib.{k.name}_launch({', '.join(args)})")
    results = [_result(b) for b in lowered.outputs]
    ret = ", ".join(results) + ("," if lowered.output_is_tuple and len(results) == 1 else "")
    lines.append(f"        return {ret}")
    return "\n".join(lines)


def _result(b: Buffer) -> str:
    """The Python expression of an output buffer: its storage, or the part of it, in its shape."""
    if b.offset:
        return f"{b.storage}.view(-1)[{b.offset}:{b.offset + math.prod(b.shape)}].view({b.shape})"
    return f"{b.storage}.view({b.shape})" if b.name != b.storage else b.name


def _base(b: Buffer, lowered: Lowered) -> Buffer:
    """The first buffer over `b`'s storage (views come after what they view)."""
    return next(x for x in lowered.buffers.values() if x.storage == b.storage)


def _pointer(b: Buffer, lowered: Lowered) -> str:
    """The Python expression passing buffer `b` to a launcher."""
    base = _base(b, lowered)
    skip = (b.offset - base.offset) * b.dtype.size  # bytes to a part of the storage
    if base.kind == "temp":
        return f"ctypes.c_void_p({base.name}.data_ptr(){f' + {skip}' if skip else ''})"
    return f"ctypes.c_void_p({base.name}.value + {skip})" if skip else base.name


def _raw_string(text: str) -> str:
    """`text` as a Python literal, readable (a raw triple-quoted string) where it can be."""
    if '"""' not in text and not text.endswith("\\"):
        return 'r"""' + text + '"""'
    return repr(text)
