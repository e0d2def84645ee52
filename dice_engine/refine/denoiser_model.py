"""The learned denoiser's network, in numpy: its vocabulary of design-token slots, the input
encoding, the forward pass, and the weights file.

A slot is one (sketch, token) pair with its ordered choices. The input row is the problem's
features (refine/features.py), the sketch as a one-hot, and for every slot of the vocabulary a
one-hot over its choices plus MASK (all zeros for the slots of other sketches). A residual
two-layer ReLU MLP maps it to logits over every slot's choices; only the masked slots' logits
are read. The training script (benchmarks/denoiser/train.py) builds the same network in torch
and writes the weights here with `save`.
"""
from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .features import FEATURE_NAMES

WEIGHTS_PATH = Path(__file__).with_name("weights") / "denoiser.npz"
_ARRAYS = ("w1", "b1", "w2", "b2", "wo", "bo")
_INVALID = -1e9     # the logit of a choice index beyond a slot's choices


@dataclass(frozen=True)
class Slot:
    sketch: str
    token: str
    choices: tuple[Any, ...]


class Vocabulary:
    """Every slot the network knows, in a fixed order."""

    def __init__(self, slots: Sequence[Slot]):
        self.slots = list(slots)
        self.sketches = sorted({s.sketch for s in self.slots})
        self._slot = {(s.sketch, s.token): i for i, s in enumerate(self.slots)}
        self._sketch = {name: i for i, name in enumerate(self.sketches)}
        self.width = max((len(s.choices) for s in self.slots), default=1)

    def slot(self, sketch: str, token: str) -> int | None:
        return self._slot.get((sketch, token))

    def choice_index(self, slot: int, value: Any) -> int | None:
        choices = self.slots[slot].choices
        for i, c in enumerate(choices):
            if c == value and type(c) is type(value):
                return i
        return None

    @property
    def input_size(self) -> int:
        return len(FEATURE_NAMES) + len(self.sketches) + len(self.slots) * (self.width + 1)

    def encode(self, features: np.ndarray, sketch: str, values: dict[int, int | None]) -> np.ndarray:
        """The input row: `values` maps each of the sketch's slots to a choice index, None: masked."""
        row = np.zeros(self.input_size, dtype=np.float32)
        row[:len(FEATURE_NAMES)] = features
        row[len(FEATURE_NAMES) + self._sketch[sketch]] = 1.0
        base = len(FEATURE_NAMES) + len(self.sketches)
        for slot, index in values.items():
            row[base + slot * (self.width + 1) + (self.width if index is None else index)] = 1.0
        return row

    def valid(self) -> np.ndarray:
        """(slots, width) booleans: which choice indices exist."""
        out = np.zeros((len(self.slots), self.width), dtype=bool)
        for i, s in enumerate(self.slots):
            out[i, :len(s.choices)] = True
        return out

    def to_json(self) -> str:
        return json.dumps([[s.sketch, s.token, list(s.choices)] for s in self.slots])

    @classmethod
    def from_json(cls, text: str) -> "Vocabulary":
        return cls([Slot(sketch, token, tuple(choices)) for sketch, token, choices in json.loads(text)])


class DenoiserNet:
    """The forward pass over numpy arrays (float32)."""

    def __init__(self, vocab: Vocabulary, arrays: dict[str, np.ndarray], meta: dict[str, Any] | None = None):
        self.vocab, self.meta = vocab, dict(meta or {})
        self.arrays = {k: np.asarray(arrays[k], dtype=np.float32) for k in _ARRAYS}
        self._invalid = ~vocab.valid()
        expected = (vocab.input_size, len(vocab.slots) * vocab.width)
        got = (self.arrays["w1"].shape[0], self.arrays["wo"].shape[1])
        if got != expected:
            raise ValueError(f"weights of shape {got} do not match the vocabulary's {expected}")

    def logits(self, rows: np.ndarray) -> np.ndarray:
        """(batch, slots, width) logits; choice indices a slot lacks get a very low logit."""
        a = self.arrays
        h = np.maximum(rows @ a["w1"] + a["b1"], 0.0)
        h = h + np.maximum(h @ a["w2"] + a["b2"], 0.0)
        out = (h @ a["wo"] + a["bo"]).reshape(len(rows), len(self.vocab.slots), self.vocab.width)
        out[:, self._invalid] = _INVALID
        return out

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        half = {k: v.astype(np.float16) for k, v in self.arrays.items()}   # halves the file; ample precision
        np.savez_compressed(path, **half, vocab=np.array(self.vocab.to_json()),
                            features=np.array(json.dumps(list(FEATURE_NAMES))),
                            meta=np.array(json.dumps(self.meta)))


def load(path: Path = WEIGHTS_PATH) -> tuple[DenoiserNet | None, str]:
    """The network stored at `path`, or None and why it cannot be used."""
    if not path.is_file():
        return None, f"no learned weights at {path}"
    try:
        with np.load(path, allow_pickle=False) as data:
            if json.loads(str(data["features"])) != list(FEATURE_NAMES):
                return None, f"{path} was trained on other problem features; retrain it"
            vocab = Vocabulary.from_json(str(data["vocab"]))
            return DenoiserNet(vocab, {k: data[k] for k in _ARRAYS}, json.loads(str(data["meta"]))), ""
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:
        return None, f"cannot read {path}: {e}"
