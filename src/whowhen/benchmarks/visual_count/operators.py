"""Error operators for the visual counting steps, one per taxonomy mode.

The answer step writes the whole tally, so an operator changes the tally itself (the wrong
belief) and rebuilds the step with the policy's own builder (`answer_action`) from it:
the count stated and answered is always the tally's count of the asked class, and the
error shows only against the detections (issue 19: no step may contradict itself).
"""

from __future__ import annotations

import random

from whowhen.benchmarks.base import covers
from whowhen.benchmarks.visual_count.policies import Tally, answer_action, count_of, parse_answer
from whowhen.runtime import Action


def _shifted(tally: Tally, key: tuple[str, str], delta: int) -> Tally:
    """The tally with one class's count changed by `delta` (a class at 0 is not listed,
    as the policy never lists one)."""
    new = {**tally, key: tally.get(key, 0) + delta}
    return {k: n for k, n in new.items() if n > 0}


@covers("react")
def miscount(action: Action, rng: random.Random) -> Action | None:
    """reasoning.miscount: one detection of the asked class is missed or counted twice when
    tallying, so the tally (and the count and answer it gives) is one off."""
    parsed = parse_answer(action)
    if parsed is None:
        return None
    tally, colour, shape, count = parsed
    keys = sorted(k for k in tally if k[0] == colour and shape in (None, k[1]))
    if not keys:
        return None
    delta = 1 if count <= 1 or rng.random() < 0.5 else -1
    new = _shifted(tally, rng.choice(keys), delta)
    return answer_action(action.actor, new, colour, shape, count_of(new, colour, shape))


def _recoloured(tally: Tally, a: str, b: str) -> Tally:
    """The tally with colours `a` and `b` taken for each other."""
    swap = {a: b, b: a}
    return {(swap.get(c, c), s): n for (c, s), n in tally.items()}


@covers("react")
def misidentified_object(action: Action, rng: random.Random) -> Action | None:
    """perception.misidentified_object: the asked class and a neighbouring one (same colour
    or same shape; another colour for a colour question) are taken for each other when
    tallying, so the tally itself credits the asked class with the other's count."""
    parsed = parse_answer(action)
    if parsed is None:
        return None
    tally, colour, shape, count = parsed
    if shape is None:
        others = sorted({c for c, _ in tally if c != colour})
        options = [_recoloured(tally, colour, other) for other in others]
    else:  # a class of the same colour or shape first, else any other class
        others = sorted(k for k in tally if k != (colour, shape))
        near = [k for k in others if k[0] == colour or k[1] == shape]
        swapped = [k for k in near if tally[k] != count] or [k for k in others if tally[k] != count]
        options = [{**tally, (colour, shape): tally[k], k: count} for k in swapped]
    options = [
        {k: n for k, n in t.items() if n > 0}
        for t in options
        if count_of(t, colour, shape) != count
    ]
    if not options:
        return None
    new = rng.choice(options)
    return answer_action(action.actor, new, colour, shape, count_of(new, colour, shape))


OPERATORS = {
    "reasoning.miscount": miscount,
    "perception.misidentified_object": misidentified_object,
}
"""Taxonomy mode -> operator for this benchmark's answer step."""
