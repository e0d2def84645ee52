"""The on-disk compile cache.

An entry is a result record (`<key>.json`) and its artifact (`<key>.<ext>`), keyed by a hash of
everything that decides the output: source, file name, arch, output kind, flags, include paths
and the nvcc version. Headers are not part of the key; the record lists every file nvcc read
(from its dependency output) with size and mtime, and a hit requires them unchanged.

Several processes may compile at once: every file is written to a temporary name in the cache
directory and renamed into place, artifact first, so a reader sees whole entries or none.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any


def cache_dir() -> Path:
    """$DICE_CACHE_DIR, else ~/.cache/dice, with a subdirectory for compile results."""
    root = os.environ.get("DICE_CACHE_DIR") or str(Path.home() / ".cache" / "dice")
    return Path(root) / "compile"


def cache_key(parts: dict[str, Any]) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def file_stamps(paths: list[str]) -> list[tuple[str, int, int]]:
    out = []
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        out.append((p, st.st_mtime_ns, st.st_size))
    return out


def _stamps_hold(stamps: list[list[Any]]) -> bool:
    return all(file_stamps([path]) == [(path, mtime, size)] for path, mtime, size in stamps)


def _atomic_write(target: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=target.suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(key: str) -> tuple[dict[str, Any], Path | None] | None:
    """The record and artifact path for `key`, or None when absent, damaged or out of date."""
    base = cache_dir() / key[:2]
    try:
        record = json.loads((base / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    artifact = base / record["artifact"] if record.get("artifact") else None
    if artifact is not None and not artifact.exists():
        return None
    if not _stamps_hold(record.get("deps", [])):
        return None
    return record, artifact


def store(key: str, record: dict[str, Any], artifact: Path | None) -> Path | None:
    """Save an entry; returns the artifact's path inside the cache."""
    base = cache_dir() / key[:2]
    base.mkdir(parents=True, exist_ok=True)
    cached_artifact = None
    if artifact is not None:
        cached_artifact = base / f"{key}{artifact.suffix}"
        fd, tmp = tempfile.mkstemp(dir=base, prefix=".tmp-", suffix=artifact.suffix)
        os.close(fd)
        shutil.copyfile(artifact, tmp)
        shutil.copymode(artifact, tmp)      # executables stay executable
        os.replace(tmp, cached_artifact)
    record = {**record, "artifact": cached_artifact.name if cached_artifact else None}
    _atomic_write(base / f"{key}.json", json.dumps(record).encode())
    return cached_artifact
