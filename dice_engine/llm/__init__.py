"""Model backends: kernels for what the library cannot serve, written by a model the user runs
and held to DICE's checks (guards, nvcc, analyses, GPU verification and timing)."""
from .backend import ModelBackend, ModelCancelled, ModelError, make_backend
from .config import BACKENDS, USES, ConfigError, LLMConfig, from_environment, from_settings
from .judge import Judgement, split_launcher
from .repair import ModelGaveUp, best_kernel, model_rounds

__all__ = ["BACKENDS", "USES", "ConfigError", "Judgement", "LLMConfig", "ModelBackend", "ModelCancelled",
           "ModelError", "ModelGaveUp", "best_kernel", "from_environment", "from_settings", "make_backend",
           "model_rounds", "split_launcher"]
