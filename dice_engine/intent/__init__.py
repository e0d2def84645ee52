"""The intent front-end: intent text (tensor form or words) → `Program`, and the intents and
generated regions of a CUDA file."""
from .errors import IntentError
from .locate import Intents, IntentSite, MarkerProblem, Region, find_intents
from .parse import default_kernel_name, parse_intent
from .regions import intent_hash, region_edit, render_region

__all__ = ["IntentError", "IntentSite", "Intents", "MarkerProblem", "Region", "default_kernel_name",
           "find_intents", "intent_hash", "parse_intent", "region_edit", "render_region"]
