"""Seeded variety for scripted agents: which of several phrasings a step uses, and
whether an agent takes a detour (a second search, a look at a wrong document first).

Why a pure function of the visible history: a warm start, a counterfactual replay and an
injection operator must all see the reference policy's own choice at a step. The draw
depends only on the task text (step 0), the step's index and a key naming the choice, so
the same history always gives the same phrasing, and an operator that rewrites a step
with the policy's builders gets a phrasing of the same family as the policy's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from whowhen.runtime import Step

STYLE_SEED = 19
"""Seed of every phrasing and detour draw (part of the hash; change it for a new style)."""


def draw(history: Sequence[Step], key: str, at: int | None = None) -> float:
    """A uniform number in [0, 1) for the choice `key` at step `at` (default: the step
    being decided, `len(history)`), from the task text, the index and the key."""
    index = len(history) if at is None else at
    task = history[0].content if history else ""
    digest = hashlib.sha256(f"{STYLE_SEED}\x00{task}\x00{index}\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def choose(history: Sequence[Step], key: str, options: Sequence[Any], at: int | None = None) -> Any:
    """One of `options`, drawn for the step being decided (see `draw`)."""
    return options[int(draw(history, key, at) * len(options))]


def phrase(
    history: Sequence[Step], key: str, variants: Sequence[str], at: int | None = None, **fields: Any
) -> str:
    """One of `variants` (format strings) filled with `fields`: several ways to say one
    action, drawn per step so runs do not reduce to one template."""
    return choose(history, key, variants, at).format(**fields)


def chance(history: Sequence[Step], key: str, p: float, at: int | None = None) -> bool:
    """True with probability `p` (a detour the agent takes or not), drawn per step."""
    return draw(history, key, at) < p


def task_chance(history: Sequence[Step], key: str, p: float) -> bool:
    """True with probability `p`, drawn once per task (the same at every step): a choice
    an agent keeps for the whole run, e.g. whether it double-checks its results."""
    return draw(history, key, at=-1) < p
