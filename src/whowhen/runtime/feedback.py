"""Feedback messages: how an attribution reaches an agent system that retries a task.

The message is an ordinary entry of the history, spoken by `FEEDBACK_ACTOR` right after
the task, so an LLM policy reads it like any other message and a scripted policy can only
act on what it says (`split_feedback`). Step numbers in it count the failed attempt's
steps from the task (step 0) *without* feedback messages, which is how the attributor saw
that attempt; so a number means the same position in every attempt of a task.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from whowhen.runtime.types import Step
from whowhen.schema import FEEDBACK_ACTOR

_FLAGGED = re.compile(
    r"^Feedback on attempt \d+ \(failed\): the decisive error was made by (\S+) at step (\d+)\."
)


def feedback_message(attempt: int, agent: str | None, step: int | None, reason: str | None) -> str:
    """What the retrying system is told about its failed attempt `attempt` (0 = the first)."""
    if agent is None or step is None:
        return f"Feedback on attempt {attempt} (failed): the attribution named no step."
    text = (
        f"Feedback on attempt {attempt} (failed): the decisive error was made by {agent} "
        f"at step {step}. (Steps are numbered from the task, step 0, not counting feedback "
        "messages.)"
    )
    reason = " ".join((reason or "").split())
    return f"{text} Reason: {reason[:500]}" if reason else text


def is_feedback(step: Step) -> bool:
    return step.actor == FEEDBACK_ACTOR


def strip_feedback(history: Sequence[Step]) -> list[Step]:
    """The history without feedback messages, renumbered: what the agents' own work looks
    like, and the numbering feedback messages use."""
    kept = [s for s in history if not is_feedback(s)]
    return [s if s.step == i else dataclasses.replace(s, step=i) for i, s in enumerate(kept)]


def flagged_steps(history: Sequence[Step]) -> frozenset[tuple[str, int]]:
    """Every (agent, step) a feedback message in `history` names as the decisive error."""
    found = set()
    for s in history:
        if is_feedback(s) and (m := _FLAGGED.match(s.content)):
            found.add((m.group(1), int(m.group(2))))
    return frozenset(found)


def split_feedback(history: Sequence[Step]) -> tuple[list[Step], frozenset[tuple[str, int]]]:
    """(history without feedback, the flagged (agent, step) pairs): all a scripted policy
    may know of the feedback is what the messages say."""
    if not any(is_feedback(s) for s in history):
        return list(history), frozenset()
    return strip_feedback(history), flagged_steps(history)
