"""Error operators for the visual counting steps, one per taxonomy mode.

Why they re-decide rather than edit text (no step may contradict itself, and
every kind of step must be a place where a decisive error can happen): each step names
the class the agent counts and, where it notes a region, that region's tally, and later
steps take both from the steps (`policies.decide`). An operator hands `decide` a wrong
belief (another class taken for the asked one, a region's listing misread) and gets the
step the policy would have written holding it, in the same wording; the wrong belief then
carries to the answer. The answer step writes the whole tally, so its operators change
the tally (a class's count off by one, two classes taken for each other) and rebuild the
step with the policy's own builder, the count stated and answered being the tally's.

Dropped, because the colour pass catches them (they would never change the outcome): a
miscount in a region note (the target colour's total no longer matches the colour pass),
and for a question about a whole colour, a colour misnoted in a region (likewise).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from whowhen.benchmarks.base import covers
from whowhen.benchmarks.visual_count.phrases import NOTE_FORMS, Target, stated_target
from whowhen.benchmarks.visual_count.policies import (
    Tally,
    answer_action,
    answer_lead,
    count_of,
    decide,
    full_pass,
    parse_answer,
    parse_tally,
)
from whowhen.benchmarks.visual_count.tasks import PALETTE, SHAPES
from whowhen.runtime import Action, Step


def _shifted(tally: Tally, key: tuple[str, str], delta: int) -> Tally:
    """The tally with one class's count changed by `delta` (a class at 0 is not listed,
    as the policy never lists one)."""
    new = {**tally, key: tally.get(key, 0) + delta}
    return {k: n for k, n in new.items() if n > 0}


def _answer(action: Action, new: Tally, parsed, history: Sequence[Step]) -> Action:
    _, colour, shape, _ = parsed
    count = count_of(new, colour, shape)
    return answer_action(action.actor, new, colour, shape, count, history, answer_lead(action))


def _held(action: Action, history: Sequence[Step]) -> Target | None:
    """The target the agent holds before a detect step, if the step is the one the policy
    writes from it (a step from a slip, or one without its task, is left alone)."""
    if action.tool != "detect_objects" or not history:
        return None
    try:
        target = stated_target(history)
    except ValueError:
        return None
    return target if decide(history, target) == action else None


def _other_targets(history: Sequence[Step], target: Target, colours_only: bool = False) -> list:
    """Classes that could be taken for the target: the same colour with another shape (or
    any shape), or another colour with the same shape. Once the full pass is in the
    history, only those it counts differently (so the answer changes), present ones first."""
    colour, shape = target
    same_colour = [(colour, s) for s in (*SHAPES, None) if s != shape]
    options = [(c, shape) for c in PALETTE if c != colour]
    if not colours_only:
        options = same_colour + options
    full = full_pass(history)
    if full is None:
        return options
    differ = [t for t in options if count_of(full, *t) != count_of(full, *target)]
    return [t for t in differ if count_of(full, *t) > 0] or differ


@covers("react")
def miscount(action: Action, rng: random.Random, history: Sequence[Step] = ()) -> Action | None:
    """reasoning.miscount: one detection of the asked class is missed or counted twice when
    the answer's tally is added up, so the count is one off."""
    parsed = parse_answer(action)
    if parsed is None:
        return None
    tally, colour, shape, count = parsed
    keys = sorted(k for k in tally if k[0] == colour and shape in (None, k[1]))
    if not keys:
        return None
    delta = 1 if count <= 1 or rng.random() < 0.5 else -1
    return _answer(action, _shifted(tally, rng.choice(keys), delta), parsed, history)


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


def _misread_region(action: Action, target: Target) -> list[Tally]:
    """Readings of the region a detect step notes (or confirms) with a shape of the
    target's colour taken for the target's (a whole-colour question: none, since the
    colour pass would catch a colour taken for another)."""
    note = NOTE_FORMS.search(action.content)
    if note is None or target[1] is None:
        return []
    return _misidentified(parse_tally(note["tally"]), *target, True)


@covers("react")
def misidentified_object(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """perception.misidentified_object: in the answer, the asked class and a neighbouring
    one (same colour or same shape; another colour for a colour question) are taken for
    each other when tallying. In a detect step: a neighbouring class is taken for the one
    the task is about (the agent counts it from this step on), or in a region's note or
    confirmation, a shape is taken for another of the same colour (which the colour pass
    cannot catch)."""
    parsed = parse_answer(action)
    if parsed is not None:
        tally, colour, shape, _ = parsed
        options = [t for t in _misidentified(tally, colour, shape, False) if t]
        if not options:
            return None
        return _answer(action, rng.choice(options), parsed, history)
    target = _held(action, history)
    if target is None:
        return None
    readings, targets = _misread_region(action, target), _other_targets(history, target)
    if readings and (not targets or rng.random() < 0.5):
        return decide(history, target, rng.choice(readings))
    return decide(history, rng.choice(targets)) if targets else None


@covers("react")
def wrong_tool_argument(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """action.wrong_tool_argument: the colour pass is called for another colour than the
    target's (miscopied), and the agent takes it for the target's colour: its note of the
    total and the answer count that colour from then on."""
    target = _held(action, history)
    if target is None or "colour" not in (action.tool_args or {}):
        return None
    targets = _other_targets(history, target, colours_only=True)
    return decide(history, rng.choice(targets)) if targets else None


OPERATORS = {
    "reasoning.miscount": miscount,
    "perception.misidentified_object": misidentified_object,
    "action.wrong_tool_argument": wrong_tool_argument,
}
"""Taxonomy mode -> operator for this benchmark's detect steps and answer step."""
