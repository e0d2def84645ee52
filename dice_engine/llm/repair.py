"""The model loop: ask, judge, feed the problems back, for up to `rounds` repair rounds.

Each round's judgement is yielded as it is made (the editor shows progress and streams every
accepted kernel). The loop stops early once a kernel is accepted and there is nothing to improve:
without a GPU that is the first kernel that compiles cleanly and passes the analyses; with one, a
verified kernel no slower than PyTorch.
"""
from __future__ import annotations

import threading
from typing import Any, Iterator

from ..arch import ArchSpec
from ..ir.patterns import Problem
from ..sketches.base import launcher_params
from .backend import Message, ModelBackend, ModelCancelled, OnText
from .judge import Judgement, judge
from .prompt import first_messages, repair_message

MAX_REPLY_IN_HISTORY = 12000


class ModelGaveUp(Exception):
    """No round produced an acceptable kernel; the message is one line naming the last reason."""


def model_rounds(backend: ModelBackend, problem: Problem, spec: ArchSpec, name: str, *,
                 rounds: int | None = None, runner: Any = None, cancel: threading.Event | None = None,
                 on_text: OnText | None = None) -> Iterator[Judgement]:
    """Judgements of the model's replies, round by round (round 0 is the first reply).

    Raises ModelError (one line) when the model cannot be asked; a cancel ends the iteration."""
    total = backend.config.rounds if rounds is None else rounds
    messages: list[Message] = first_messages(problem.program, spec, name, launcher_params(problem))
    label = backend.config.label
    for round_no in range(total + 1):
        if cancel is not None and cancel.is_set():
            return
        try:
            reply = backend.complete(messages, cancel=cancel, on_text=on_text)
        except ModelCancelled:
            return
        verdict = judge(reply, round_no, problem, spec, name, label, runner)
        yield verdict
        feedback = verdict.problems or verdict.advice
        if verdict.accepted and (verdict.verified is not True or not verdict.advice):
            return       # nothing a GPU could say about it, or nothing left to improve
        if not feedback:
            return
        messages = messages + [{"role": "assistant", "content": reply[:MAX_REPLY_IN_HISTORY]},
                               repair_message(feedback)]


def best_kernel(judgements: Iterator[Judgement]) -> Iterator[Judgement]:
    """The accepted judgements that improve on the ones before (faster when measured); raises
    ModelGaveUp when there is none."""
    best: Judgement | None = None
    last: Judgement | None = None
    for verdict in judgements:
        last = verdict
        if not verdict.accepted:
            continue
        if best is None or _faster(verdict, best):
            best = verdict
            yield verdict
    if best is None:
        if last is None:
            raise ModelGaveUp("cancelled before the model replied")
        rounds = last.round + 1
        raise ModelGaveUp(f"the model gave no acceptable kernel in {rounds} "
                          f"{'round' if rounds == 1 else 'rounds'}; last: {last.problems[0]}")


def _faster(new: Judgement, old: Judgement) -> bool:
    if new.time_us is None:
        return False
    return old.time_us is None or new.time_us < old.time_us
