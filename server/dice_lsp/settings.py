"""The `dice.*` settings: parsed from initializationOptions, workspace/configuration and
didChangeConfiguration (features/settings.py) into one immutable record."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, fields, replace
from typing import Any, Mapping

from dice_engine.arch import DEFAULT_ARCH, resolve
from dice_engine.llm import ConfigError, LLMConfig, from_settings

log = logging.getLogger(__name__)

SECTION = "dice"


@dataclass(frozen=True)
class Settings:
    arch: str = DEFAULT_ARCH
    nvcc_path: str | None = None
    nvcc_flags: tuple[str, ...] = ()
    include_paths: tuple[str, ...] = ()
    gpu_enabled: bool = False          # the only switch that lets the server run code on a GPU
    budget: int = 24                   # evaluations per generation
    regenerate_on_save: bool = True
    # Write each better kernel into the region as it is found (one undo step per round) instead
    # of once when the search ends (one undo step per generation; rounds show as progress).
    stream_edits: bool = False
    compile_on_change: bool = True     # background nvcc job after edits
    compile_debounce_ms: int = 800
    # dice.llm.* as the client sent them (camelCase keys below "llm."); read by `llm_config`. The
    # VS Code client sends use=off in an untrusted workspace, so no model is asked there.
    llm: Mapping[str, Any] = field(default_factory=dict)


# settings key (as clients write it, below "dice.") -> Settings field
_KEYS = {
    "arch": "arch", "nvccPath": "nvcc_path", "nvccFlags": "nvcc_flags",
    "includePaths": "include_paths", "gpu.enabled": "gpu_enabled", "budget": "budget",
    "regenerateOnSave": "regenerate_on_save", "streamEdits": "stream_edits",
    "compileOnChange": "compile_on_change",
    "compileDebounceMs": "compile_debounce_ms",
}


def _flatten(raw: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"gpu": {"enabled": true}} and {"gpu.enabled": true} both become {"gpu.enabled": True}."""
    flat: dict[str, Any] = {}
    for key, value in raw.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and name not in _KEYS:
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def _coerce(field_name: str, value: Any) -> Any:
    if field_name in ("nvcc_flags", "include_paths"):
        if isinstance(value, str):
            value = value.split()
        return tuple(str(v) for v in value)
    if field_name in ("gpu_enabled", "regenerate_on_save", "stream_edits", "compile_on_change"):
        return bool(value)
    if field_name in ("budget", "compile_debounce_ms"):
        return max(1 if field_name == "budget" else 0, int(value))
    if field_name == "nvcc_path":
        return str(value) or None
    if field_name == "arch":
        return resolve(str(value)).name
    return value


def merge(base: Settings, raw: Any, problems: list[str] | None = None) -> Settings:
    """`base` updated by whatever `dice.*` keys `raw` holds; bad values are logged, ignored and,
    one line each, appended to `problems` for the user to see."""
    if not isinstance(raw, Mapping):
        return base
    if isinstance(raw.get(SECTION), Mapping):
        raw = raw[SECTION]
    flat = {k.removeprefix(f"{SECTION}."): v for k, v in _flatten(raw).items()}
    changes: dict[str, Any] = {}
    llm = {k.removeprefix("llm."): v for k, v in flat.items() if k.startswith("llm.")}
    if llm:
        changes["llm"] = {k: v for k, v in {**base.llm, **llm}.items() if v is not None}
        try:
            from_settings(changes["llm"])
        except ConfigError as exc:
            log.warning("dice.llm settings: %s", exc)
    for key, value in flat.items():
        field_name = _KEYS.get(key)
        if field_name is None or value is None:
            continue
        try:
            changes[field_name] = _coerce(field_name, value)
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("ignoring setting dice.%s=%r: %s", key, value, exc)
            if problems is not None:
                kept = getattr(base, field_name)
                problems.append(f"DICE: setting dice.{key} = {value!r} ignored ({exc}); keeping {kept!r}")
    return replace(base, **changes)


def llm_config(settings: Settings) -> LLMConfig:
    """The model backend the settings configure (ConfigError names a bad one)."""
    return from_settings(settings.llm)


def model_active(settings: Settings) -> bool:
    """Whether a usable model backend is configured and allowed to be asked."""
    try:
        return llm_config(settings).active
    except ConfigError:
        return False


def describe(settings: Settings) -> str:
    return ", ".join(f"{f.name}={getattr(settings, f.name)!r}" for f in fields(settings))
