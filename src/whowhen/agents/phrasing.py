"""Seeded variety for scripted agents: which of several phrasings a step uses, and
whether an agent takes a detour (a second search, a look at a wrong document first).

Why a pure function of the visible history: a warm start, a counterfactual replay and an
injection operator must all see the reference policy's own choice at a step. The draw
depends only on the task text (step 0), the step's index and a key naming the choice, so
the same history always gives the same phrasing, and an operator that rewrites a step
with the policy's builders gets a phrasing of the same family as the policy's.

A `Form` is one kind of step with several wordings and the regex that reads any of them
back: a step kind with one template is found by its template alone, so policies say each
kind of step in a drawn wording, and an operator re-says a step in the wording the
original used (`at`), with other fields.
"""

from __future__ import annotations

import hashlib
import re
import string
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


ANY = r".+?"


class Form:
    """A step kind: `key` (the phrasing draw's name), its wordings, and field patterns."""

    def __init__(self, key: str, variants: Sequence[str], **patterns: str) -> None:
        self.key, self.variants = key, tuple(variants)
        self.regexes = tuple(_compile(v, patterns) for v in self.variants)

    def index(self, history: Sequence[Step]) -> int:
        """Which wording the step being decided uses."""
        return choose(history, self.key, range(len(self.variants)))

    def say(self, history: Sequence[Step], **fields: Any) -> str:
        return self.at(self.index(history), **fields)

    def at(self, i: int, **fields: Any) -> str:
        return self.variants[i].format(**fields)

    def read(self, text: str) -> tuple[int, dict[str, str]] | None:
        """(wording index, fields) of a text in this form, or None."""
        for i, regex in enumerate(self.regexes):
            m = regex.match(text)
            if m:
                return i, m.groupdict()
        return None

    def fields(self, text: str) -> dict[str, str] | None:
        found = self.read(text)
        return found[1] if found else None


def _compile(variant: str, patterns: dict[str, str]) -> re.Pattern[str]:
    out, seen = [], set()
    for literal, name, _, _ in string.Formatter().parse(variant):
        out.append(re.escape(literal))
        if name is None:
            continue
        if name in seen:
            out.append(f"(?P={name})")
        else:
            seen.add(name)
            out.append(f"(?P<{name}>{patterns.get(name, ANY)})")
    return re.compile("^" + "".join(out) + "$", re.S)
