"""A local model directory through Hugging Face `transformers` (the `dice-cuda[llm]` extra).

Causal models generate through `generate`; diffusion language models (Dream, LLaDA, SDAR-style
block diffusion, the DICE paper's checkpoints) through the method their own code provides
(`diffusion_generate` where it exists), with the steps and block length from the settings. Their
code is Python shipped in the model directory, so it runs only with `trust_remote_code` on.
Files are read with `local_files_only`: nothing is ever downloaded.
"""
from __future__ import annotations

import inspect
import threading
from pathlib import Path
from typing import Any

from .backend import Message, ModelCancelled, ModelError, OnText
from .config import LLMConfig

DIFFUSION_METHODS = ("diffusion_generate",)


class TransformersBackend:
    def __init__(self, config: LLMConfig):
        self.config = config
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        if self._model is not None:
            return
        path = Path(self.config.model_path).expanduser()
        if not (path / "config.json").is_file():
            raise ModelError(f"{path} is not a model directory (no config.json)")
        try:
            import torch
            import transformers
        except ImportError:
            raise ModelError("the transformers backend needs `pip install 'dice-cuda[llm]'`") from None
        options = {"local_files_only": True, "trust_remote_code": self.config.trust_remote_code}
        try:
            self._tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), **options)
            try:
                model = transformers.AutoModelForCausalLM.from_pretrained(str(path), **options)
            except ValueError:      # not a causal LM (diffusion models register as AutoModel)
                model = transformers.AutoModel.from_pretrained(str(path), **options)
        except (OSError, ValueError, ImportError, RuntimeError) as e:
            hint = "; its code needs dice.llm.trustRemoteCode" if "trust_remote_code" in str(e) else ""
            raise ModelError(f"cannot load the model in {path}: {' '.join(str(e).split())[:200]}{hint}") \
                from None
        device = "cuda" if torch.cuda.is_available() else "cpu"
        self._model = model.to(device).eval()

    def _prompt_ids(self, messages: list[Message]) -> Any:
        tokenizer = self._tokenizer
        if getattr(tokenizer, "chat_template", None):
            ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt")
        else:
            text = "".join(f"{m['role']}: {m['content']}\n\n" for m in messages) + "assistant: "
            ids = tokenizer(text, return_tensors="pt").input_ids
        return ids.to(self._model.device)

    def complete(self, messages: list[Message], *, cancel: threading.Event | None = None,
                 on_text: OnText | None = None) -> str:
        with self._lock:
            self._load()
            ids = self._prompt_ids(messages)
            method = next((getattr(self._model, m) for m in DIFFUSION_METHODS
                           if hasattr(self._model, m)), None)
            try:
                output = self._diffuse(method, ids) if method else self._generate(ids, cancel)
            except (RuntimeError, ValueError, TypeError) as e:
                raise ModelError(f"generation failed: {' '.join(str(e).split())[:200]}") from None
            if cancel is not None and cancel.is_set():
                raise ModelCancelled("cancelled while the model was generating")
            sequences = getattr(output, "sequences", output)
            text = self._tokenizer.decode(sequences[0][ids.shape[1]:], skip_special_tokens=True)
        if on_text is not None:
            on_text(text)
        return text

    def _generate(self, ids: Any, cancel: threading.Event | None) -> Any:
        import transformers

        class Cancelled(transformers.StoppingCriteria):
            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> bool:
                return cancel is not None and cancel.is_set()

        sample = self.config.temperature > 0
        kwargs: dict[str, Any] = {"max_new_tokens": self.config.max_tokens, "do_sample": sample,
                                  "stopping_criteria": transformers.StoppingCriteriaList([Cancelled()]),
                                  "attention_mask": ids.new_ones(ids.shape)}
        if sample:
            kwargs["temperature"] = self.config.temperature
        pad = self._tokenizer.pad_token_id if self._tokenizer.pad_token_id is not None \
            else self._tokenizer.eos_token_id
        if pad is not None:
            kwargs["pad_token_id"] = pad
        return self._model.generate(ids, **kwargs, **self.config.extra)

    def _diffuse(self, method: Any, ids: Any) -> Any:
        """A diffusion model's own generation method, given the settings it accepts."""
        wanted = {"max_new_tokens": self.config.max_tokens,
                  "max_length": ids.shape[1] + self.config.max_tokens,
                  "steps": self.config.diffusion_steps, "block_length": self.config.block_length,
                  "temperature": self.config.temperature, "attention_mask": ids.new_ones(ids.shape),
                  "return_dict_in_generate": True, **self.config.extra}
        try:
            accepted = inspect.signature(method).parameters
        except (TypeError, ValueError):
            accepted = {}
        open_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
        kwargs = {k: v for k, v in wanted.items() if open_kwargs or k in accepted}
        if "max_new_tokens" in kwargs:
            kwargs.pop("max_length", None)
        return method(ids, **kwargs)
