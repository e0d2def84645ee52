"""One interface in front of every model: chat messages in, the reply's text out.

Backends never download anything: `openai` talks to an endpoint the user runs or chose, and
`transformers` loads a directory already on disk. Errors are `ModelError`s whose message is one
line fit for a diagnostic; cancellation (the editor closed the request) is `ModelCancelled`.
"""
from __future__ import annotations

import threading
from typing import Callable, Protocol

from .config import LLMConfig

Message = dict[str, str]          # {"role": "system" | "user" | "assistant", "content": ...}
OnText = Callable[[str], None]    # receives each piece of the reply as it arrives


class ModelError(Exception):
    """The model could not be asked or gave no usable reply; the message is one line."""


class ModelCancelled(ModelError):
    """The caller cancelled while the model was replying."""


class ModelBackend(Protocol):
    config: LLMConfig

    def complete(self, messages: list[Message], *, cancel: threading.Event | None = None,
                 on_text: OnText | None = None) -> str:
        """The reply to `messages` (the whole text; pieces go to `on_text` as they come)."""
        ...


def make_backend(config: LLMConfig) -> ModelBackend:
    """The backend `config` names (ConfigError when it is not configured)."""
    from .config import ConfigError

    config = config.validated()
    if not config.configured:
        what = "a model directory (--llm-model-path)" if config.backend == "transformers" \
            else "an endpoint (--llm URL or DICE_LLM_BASE_URL)"
        raise ConfigError(f"no model is configured: give {what}")
    if config.backend == "transformers":
        from .transformers_backend import TransformersBackend
        return TransformersBackend(config)
    from .openai_backend import OpenAIBackend
    return OpenAIBackend(config)
