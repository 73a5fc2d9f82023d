"""Error operators for the visual counting steps, one per taxonomy mode.

The answer step writes the whole tally, so an operator changes the tally itself (the wrong
belief) and rebuilds the step with the policy's own builder (`answer_action`, with the
step's history so the wording drawn is the policy's own at that index) from it: the count
stated and answered is always the tally's count of the asked class, and the error shows
only against the detections (issue 19: no step may contradict itself). The same operators
rewrite a region note (the tally of one grid cell the agent writes before its next call):
the note then states the wrong belief, and the agent adds it up later (a shape taken for
another of the same colour propagates; a miscount of the asked colour is caught by the
colour pass).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from whowhen.benchmarks.base import covers
from whowhen.benchmarks.visual_count.policies import (
    NOTE_FORMS,
    Tally,
    answer_action,
    answer_lead,
    count_of,
    format_tally,
    parse_answer,
    parse_tally,
)
from whowhen.benchmarks.visual_count.tasks import SHAPES, parse_question
from whowhen.runtime import Action, Step


def _shifted(tally: Tally, key: tuple[str, str], delta: int) -> Tally:
    """The tally with one class's count changed by `delta` (a class at 0 is not listed,
    as the policy never lists one)."""
    new = {**tally, key: tally.get(key, 0) + delta}
    return {k: n for k, n in new.items() if n > 0}


def _note(action: Action) -> tuple[re.Match[str], Tally] | None:
    """The region note a detect step opens with, and its tally."""
    if action.tool != "detect_objects":
        return None
    m = NOTE_FORMS.search(action.content)
    return (m, parse_tally(m["tally"])) if m else None


def _renoted(action: Action, note: re.Match[str], tally: Tally) -> Action:
    """The step with its region note stating `tally` instead, the rest unchanged."""
    a, b = note.span("tally")
    text = action.content[:a] + format_tally(tally) + action.content[b:]
    return Action(action.actor, text, action.tool, action.tool_args)


def _asked(history: Sequence[Step]) -> tuple[str, str | None] | None:
    try:
        return parse_question(history[0].content) if history else None
    except ValueError:
        return None


def _answer(action: Action, new: Tally, parsed, history: Sequence[Step]) -> Action:
    _, colour, shape, _ = parsed
    count = count_of(new, colour, shape)
    return answer_action(action.actor, new, colour, shape, count, history, answer_lead(action))


@covers("react")
def miscount(action: Action, rng: random.Random, history: Sequence[Step] = ()) -> Action | None:
    """reasoning.miscount: one detection of the asked class is missed or counted twice when
    tallying (the answer's tally, or one region's note), so the count is one off."""
    parsed = parse_answer(action)
    note = _note(action) if parsed is None else None
    asked = _asked(history)
    if parsed is not None:
        tally, colour, shape, count = parsed
    elif note is not None and asked is not None:
        tally, (colour, shape) = note[1], asked
        count = count_of(tally, colour, shape)
    else:
        return None
    keys = sorted(k for k in tally if k[0] == colour and shape in (None, k[1]))
    if not keys:
        return None
    delta = 1 if count <= 1 or rng.random() < 0.5 else -1
    new = _shifted(tally, rng.choice(keys), delta)
    if note is not None:
        return _renoted(action, note[0], new)
    return _answer(action, new, parsed, history)


def _recoloured(tally: Tally, a: str, b: str) -> Tally:
    """The tally with colours `a` and `b` taken for each other."""
    swap = {a: b, b: a}
    return {(swap.get(c, c), s): n for (c, s), n in tally.items()}


def _misidentified(tally: Tally, colour: str, shape: str | None, near_only: bool) -> list[Tally]:
    """Tallies with the asked class and a neighbouring one taken for each other (another
    colour for a colour question; same colour or shape first for a shape question)."""
    count = count_of(tally, colour, shape)
    if shape is None:
        others = sorted({c for c, _ in tally if c != colour})
        options = [_recoloured(tally, colour, other) for other in others]
    else:
        extra = {(colour, s) for s in SHAPES} if near_only else set()
        classes = sorted(set(tally) | extra)
        others = [k for k in classes if k != (colour, shape)]
        near = [k for k in others if k[0] == colour or (k[1] == shape and not near_only)]
        if near_only:
            near = [k for k in near if k[0] == colour]
        pool = near if near_only else (near or others)
        swapped = [k for k in pool if tally.get(k, 0) != count]
        if not near_only and not swapped:
            swapped = [k for k in others if tally.get(k, 0) != count]
        options = [{**tally, (colour, shape): tally.get(k, 0), k: count} for k in swapped]
    return [
        {k: n for k, n in t.items() if n > 0}
        for t in options
        if count_of(t, colour, shape) != count
    ]


@covers("react")
def misidentified_object(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """perception.misidentified_object: the asked class and a neighbouring one (same colour
    or same shape; another colour for a colour question) are taken for each other when
    tallying, so the tally itself credits the asked class with the other's count. In a
    region note, a shape is taken for another of the same colour (the colour pass cannot
    catch it), or a colour for another."""
    parsed = parse_answer(action)
    if parsed is not None:
        tally, colour, shape, _ = parsed
        options = [t for t in _misidentified(tally, colour, shape, False) if t]
        if not options:
            return None
        return _answer(action, rng.choice(options), parsed, history)
    note, asked = _note(action), _asked(history)
    if note is None or asked is None:
        return None
    options = _misidentified(note[1], *asked, True)
    return _renoted(action, note[0], rng.choice(options)) if options else None


OPERATORS = {
    "reasoning.miscount": miscount,
    "perception.misidentified_object": misidentified_object,
}
"""Taxonomy mode -> operator for this benchmark's answer step and region notes."""
