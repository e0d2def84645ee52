"""What a model backend needs to know: where the model is, how to ask it, how far to trust it.

The same record is filled from the CLI flags, the environment (`DICE_LLM_BASE_URL`,
`DICE_LLM_MODEL`, `DICE_LLM_API_KEY`) and the editor's `dice.llm.*` settings (design.md §6).
The API key itself is never stored here: only the name of the variable that holds it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

BACKENDS = ("openai", "transformers")
USES = ("off", "fallback", "compete")
DEFAULT_KEY_ENV = "DICE_LLM_API_KEY"


class ConfigError(ValueError):
    """A setting that cannot work; the message names it."""


@dataclass(frozen=True)
class LLMConfig:
    backend: str = "openai"
    base_url: str = ""              # openai: the server's base URL, e.g. http://127.0.0.1:8000/v1
    model: str = ""                 # openai: the served model's name
    model_path: str = ""            # transformers: a local model directory
    api_key_env: str = DEFAULT_KEY_ENV
    timeout_s: float = 120.0        # per request
    max_tokens: int = 4096
    temperature: float = 0.2
    stream: bool = True             # server-sent events (cancellable mid-reply)
    use: str = "fallback"           # off | fallback (only where no sketch serves) | compete
    rounds: int = 3                 # repair rounds after the first reply
    trust_remote_code: bool = False # transformers: run the model directory's own Python code
    diffusion_steps: int = 256      # transformers, diffusion models
    block_length: int = 32          # transformers, block-diffusion models
    extra: dict[str, Any] = field(default_factory=dict)   # more generation keyword arguments

    @property
    def configured(self) -> bool:
        """Whether a model is named at all (otherwise no backend exists)."""
        if self.backend == "transformers":
            return bool(self.model_path)
        return bool(self.base_url)

    @property
    def active(self) -> bool:
        return self.use != "off" and self.configured

    @property
    def label(self) -> str:
        """The model's name as reports show it."""
        if self.backend == "transformers":
            return os.path.basename(self.model_path.rstrip("/")) or self.model_path
        return self.model or "model"

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def validated(self) -> "LLMConfig":
        if self.backend not in BACKENDS:
            raise ConfigError(f"unknown model backend '{self.backend}' (use {' or '.join(BACKENDS)})")
        if self.use not in USES:
            raise ConfigError(f"llm use '{self.use}' is not one of {', '.join(USES)}")
        if self.backend == "openai" and self.base_url and not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(f"the model endpoint '{self.base_url}' is not an http(s) URL")
        if self.backend == "openai" and self.base_url and not self.model:
            raise ConfigError("a model endpoint needs a model name (--model or DICE_LLM_MODEL)")
        if self.timeout_s <= 0 or self.max_tokens < 1 or self.rounds < 0:
            raise ConfigError("the model's timeout and max tokens must be positive, its rounds at least 0")
        if self.diffusion_steps < 1 or self.block_length < 1:
            raise ConfigError("diffusion steps and block length must be at least 1")
        if not 0 <= self.temperature <= 2:
            raise ConfigError("the model's temperature must lie between 0 and 2")
        return self


def from_environment(base: LLMConfig | None = None, environ: Mapping[str, str] | None = None) -> LLMConfig:
    """`base` with the `DICE_LLM_*` variables filled in where `base` leaves them empty."""
    env = os.environ if environ is None else environ
    config = base or LLMConfig()
    return replace(config, base_url=config.base_url or env.get("DICE_LLM_BASE_URL", ""),
                   model=config.model or env.get("DICE_LLM_MODEL", ""))


# The editor's `dice.llm.*` keys → fields (the settings' own names stay camelCase there).
SETTING_FIELDS = {"backend": "backend", "baseUrl": "base_url", "model": "model", "modelPath": "model_path",
                  "apiKeyEnv": "api_key_env", "timeout": "timeout_s", "maxTokens": "max_tokens",
                  "temperature": "temperature", "stream": "stream", "use": "use", "rounds": "rounds",
                  "trustRemoteCode": "trust_remote_code", "diffusionSteps": "diffusion_steps",
                  "blockLength": "block_length"}


def from_settings(settings: Mapping[str, Any]) -> LLMConfig:
    """A config from the editor's `dice.llm` object; unknown keys are ignored, bad values are a
    ConfigError naming the setting."""
    kwargs: dict[str, Any] = {}
    defaults = LLMConfig()
    for key, name in SETTING_FIELDS.items():
        if key not in settings or settings[key] is None:
            continue
        value, want = settings[key], type(getattr(defaults, name))
        if want is bool:
            ok = isinstance(value, bool)
        elif want in (int, float):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        else:
            ok = isinstance(value, str)
        if not ok:
            raise ConfigError(f"dice.llm.{key}: expected a {want.__name__}, got {value!r}")
        kwargs[name] = want(value)
    return from_environment(LLMConfig(**kwargs)).validated()
