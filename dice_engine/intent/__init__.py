"""The intent front-end: intent text (tensor form or words) → `Program`."""
from .errors import IntentError
from .parse import default_kernel_name, parse_intent

__all__ = ["IntentError", "default_kernel_name", "parse_intent"]
