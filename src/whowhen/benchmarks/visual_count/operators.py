"""Error operators for the visual counting steps, one per taxonomy mode."""

from __future__ import annotations

import random

from whowhen.benchmarks.base import covers
from whowhen.benchmarks.visual_count.policies import answer_action, count_of, parse_answer
from whowhen.runtime import Action


@covers("react")
def miscount(action: Action, rng: random.Random) -> Action | None:
    """reasoning.miscount: the asked class is counted one too many or one too few (and the
    tally says so too, for a colour-and-shape question)."""
    parsed = parse_answer(action)
    if parsed is None:
        return None
    tally, colour, shape, count = parsed
    new = count + 1 if count <= 1 or rng.random() < 0.5 else count - 1
    if shape is not None:
        tally = {**tally, (colour, shape): new}
    return answer_action(action.actor, tally, colour, shape, new)


@covers("react")
def misidentified_object(action: Action, rng: random.Random) -> Action | None:
    """perception.misidentified_object: the count of a neighbouring class (same colour or
    same shape; another colour for a colour question) is taken for the asked class."""
    parsed = parse_answer(action)
    if parsed is None:
        return None
    tally, colour, shape, count = parsed
    if shape is None:
        others = {c for c, _ in tally if c != colour}
        counts = [count_of(tally, c, None) for c in sorted(others)]
    else:
        near = [k for k in tally if k != (colour, shape) and (k[0] == colour or k[1] == shape)]
        counts = [tally[k] for k in near] or [n for k, n in tally.items() if k != (colour, shape)]
    counts = [n for n in counts if n != count]
    if not counts:
        return None
    return answer_action(action.actor, tally, colour, shape, rng.choice(counts))


OPERATORS = {
    "reasoning.miscount": miscount,
    "perception.misidentified_object": misidentified_object,
}
"""Taxonomy mode -> operator for this benchmark's answer step."""
