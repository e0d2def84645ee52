"""`compile_cuda`: run nvcc on a source text (argument lists, never a shell) and return errors,
warnings and per-kernel resources as data, with an on-disk cache."""
from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from . import cache as disk_cache
from .messages import CompileMessage, parse_messages
from .processes import run_group
from .resources import KernelResources, parse_resources
from .toolchain import find_nvcc, nvcc_version

_OUTPUTS = {"cubin": ("-cubin", ".cubin"), "ptx": ("-ptx", ".ptx"), "shared": ("-shared", ".so"),
            "executable": ("-link", ".out")}
TEMP_SOURCE = "dice_src.cu"   # the name nvcc sees (and -lineinfo records) for the source text


@dataclass
class CompileResult:
    ok: bool
    messages: list[CompileMessage] = field(default_factory=list)
    resources: dict[str, KernelResources] = field(default_factory=dict)   # by kernel base name
    artifact: Path | None = None
    log: str = ""
    cached: bool = False

    @property
    def errors(self) -> list[CompileMessage]:
        return [m for m in self.messages if m.severity == "error"]

    def first_error(self) -> str:
        """One line naming the first error, for reports."""
        if not self.errors:
            return ""
        e = self.errors[0]
        where = f"{e.file}:{e.line}: " if e.line else ""
        return where + e.message.splitlines()[0]

    def kernel(self, name: str) -> KernelResources | None:
        """Resources of kernel `name`, given qualified (`ns::k`) or with template args (`k<4>`)."""
        base = name.split("::")[-1].split("<")[0].split("(")[0].strip()
        return self.resources.get(base)


def compile_cuda(source: str, arch: str = "sm_90", *, output: str = "cubin", flags: Sequence[str] = (),
                 include_paths: Sequence[str] = (), nvcc: str | None = None, timeout: float = 120.0,
                 cache: bool = True, filename: str = "kernel.cu",
                 cancel: Callable[[], bool] | None = None) -> CompileResult:
    """Compile `source` for `arch` into a cubin, PTX, shared library or executable.

    Messages refer to `filename` (the caller's name for the text). Raises NvccNotFound when no
    nvcc can be found; every other failure, including a timeout, is a result with ok=False.
    With cache=False the artifact is left in a fresh temporary directory the caller owns.
    `cancel`, polled while nvcc runs, stops it (and its children) when it returns True."""
    if output not in _OUTPUTS:
        raise ValueError(f"output must be one of {sorted(_OUTPUTS)}, got {output!r}")
    nvcc_path = find_nvcc(nvcc)
    includes = [str(Path(p).resolve()) for p in include_paths]
    key = disk_cache.cache_key({"source": source, "filename": filename, "arch": arch, "output": output,
                                "flags": list(flags), "includes": includes,
                                "nvcc": nvcc_version(nvcc_path)})
    if cache and (hit := disk_cache.load(key)):
        record, artifact = hit
        return _from_record(record, artifact, cached=True)

    mode, suffix = _OUTPUTS[output]
    workdir = Path(tempfile.mkdtemp(prefix="dice-nvcc-"))
    try:
        (workdir / TEMP_SOURCE).write_text(source, encoding="utf-8")
        out_path = workdir / f"out{suffix}"
        cmd = [nvcc_path, mode, *_target_flags(arch), "-MD", "-MF", "deps.d"]
        if output != "ptx":
            cmd += ["-Xptxas", "-v"]
        if output == "shared":
            cmd += ["-Xcompiler", "-fPIC"]
        cmd += [f"-I{p}" for p in includes] + list(flags) + [TEMP_SOURCE, "-o", out_path.name]
        returncode, log, why = run_group(cmd, workdir, timeout, cancel)
        if returncode is None:
            stopped = (f"nvcc did not finish within {timeout:g} s and was stopped" if why == "timeout"
                       else "the compile was cancelled")
            return CompileResult(False, [CompileMessage(filename, 0, 0, "error", stopped)], log=log)
        messages = parse_messages(log, temp_name=TEMP_SOURCE, filename=filename, source=source)
        ok = returncode == 0 and out_path.exists()
        if not ok and not any(m.severity == "error" for m in messages):
            tail = log.strip().splitlines()[-1:] or [f"exit status {returncode}"]
            messages.append(CompileMessage(filename, 0, 0, "error", f"nvcc failed: {tail[0]}"))
        result = CompileResult(ok, messages, parse_resources(log), out_path if ok else None, log)
        if cache and returncode >= 0:    # a compiler killed by a signal says nothing about the source
            deps = _read_deps(workdir / "deps.d", workdir)
            record = _to_record(result) | {"deps": disk_cache.file_stamps(deps)}
            result.artifact = disk_cache.store(key, record, result.artifact)
            return result
        if ok and not cache:
            keep = Path(tempfile.mkdtemp(prefix="dice-artifact-"))
            result.artifact = out_path.replace(keep / out_path.name)
        return result
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _target_flags(arch: str) -> list[str]:
    """nvcc's target flags. An arch-specific target (sm_90a) is named by -gencode alone: nvcc 13.0's
    `-arch=sm_90a` shorthand also runs a plain compute_90 pass, which rejects wgmma/setmaxnreg."""
    if arch.startswith("sm_") and arch.endswith("a"):
        return [f"-gencode=arch=compute_{arch[3:]},code={arch}"]
    return [f"-arch={arch}"]


def _read_deps(path: Path, workdir: Path) -> list[str]:
    """Files nvcc read (from its make-style dependency output), minus the temporary source."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").replace("\\\n", " ")
    except OSError:
        return []
    _, _, rest = text.partition(":")
    out = []
    for token in re.findall(r"(?:\\ |\S)+", rest):
        p = (workdir / token.replace("\\ ", " ")).resolve()
        if workdir.resolve() not in p.parents:
            out.append(str(p))
    return out


def _to_record(result: CompileResult) -> dict[str, Any]:
    return {"ok": result.ok, "log": result.log,
            "messages": [m.to_json() for m in result.messages],
            "resources": {k: r.to_json() for k, r in result.resources.items()}}


def _from_record(record: dict[str, Any], artifact: Path | None, *, cached: bool) -> CompileResult:
    return CompileResult(ok=record["ok"], messages=[CompileMessage(**m) for m in record["messages"]],
                         resources={k: KernelResources(**r) for k, r in record["resources"].items()},
                         artifact=artifact, log=record["log"], cached=cached)
