"""What the error operators need to know about a step: the question its agent is
answering, the values it states, and which wrong values would change the answer.

An injected error has to decide the outcome wherever it is placed, so the
operators pick, among the plausible misreadings of a step's values, one that changes the
answer to the question the agent believes it is answering (a misread that leaves the
answer as it was is no error of the run).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from whowhen.benchmarks.chart_qa.actions import parse_values
from whowhen.benchmarks.chart_qa.goals import Goal, answer_of, task_goal
from whowhen.benchmarks.chart_qa.policies import goal_for
from whowhen.benchmarks.chart_qa.reading import _reads
from whowhen.benchmarks.chart_qa.tasks import TaskInfo, parse_task
from whowhen.benchmarks.scoring import relaxed
from whowhen.runtime import Step

Values = list[tuple[str, int]]


def task_info(history: Sequence[Step]) -> TaskInfo | None:
    try:
        return parse_task(history[0].content) if history else None
    except ValueError:
        return None


def goal_of(actor: str, history: Sequence[Step]) -> Goal | None:
    """The question `actor` is answering at the end of `history` (None: no task)."""
    info = task_info(history)
    if info is None:
        return None
    if actor in ("orchestrator", "reader", "analyst", "verifier"):
        return goal_for(history, actor, info)
    return task_goal(info)


def changes(goal: Goal | None, old: Values, new: Values) -> bool:
    """Whether the new values answer the question differently (as scored: relaxed)."""
    if goal is None:
        return new != old
    before, after = answer_of(goal, old), answer_of(goal, new)
    if after is None:
        return False
    return before is None or not relaxed(after, before)


def chart_values(history: Sequence[Step], actor: str) -> Values | None:
    """The whole chart as `actor`'s overview read it (None: no overview yet)."""
    for _, obs in reversed(_reads(history, 0, actor)):
        parsed = parse_values(obs.content)
        if parsed:
            return parsed[1]
    return None


def _transcribe(value: int, rng: random.Random) -> int:
    """A garbled copy of a value: digits swapped, or off by ten."""
    text = str(value)
    if len(text) == 2 and text[0] != text[1] and text[1] != "0" and rng.random() < 0.6:
        return int(text[::-1])
    return value + 10 if value < 50 else value - 10


def misreadings(values: Values, i: int) -> list[int]:
    """Plausible misreadings of bar `i`: a neighbouring bar's value, a few units off, its
    digits swapped, ten off."""
    value = values[i][1]
    near = [values[j][1] for j in (i - 1, i + 1) if 0 <= j < len(values)]
    offsets = [value + d for d in (-3, -2, -1, 1, 2, 3)]
    text = str(value)
    swapped = [int(text[::-1])] if len(text) == 2 and text[1] != "0" else []
    tens = [value + 10 if value < 50 else value - 10]
    return sorted({v for v in near + offsets + swapped + tens if v > 0 and v != value})


def replace(values: Values, index: int, value: int) -> Values:
    return [(n, value if i == index else v) for i, (n, v) in enumerate(values)]


def exchanged(values: Values, i: int, j: int) -> Values:
    swapped = {i: values[j][1], j: values[i][1]}
    return [(n, swapped.get(k, v)) for k, (n, v) in enumerate(values)]


def decisive_misread(
    values: Values,
    goal: Goal | None,
    rng: random.Random,
    among: Sequence[str] = (),
    transcribe: bool = False,
) -> Values | None:
    """The values with one bar (of `among`, default any) misread so that the answer
    changes; a random misread of that kind when none would change it (None: no bars).
    `transcribe`: a garbled copy (digits swapped, ten off) rather than a misreading."""
    idx = [i for i, (n, _) in enumerate(values) if not among or n in among]
    if not idx:
        return None
    options = [
        replace(values, i, v)
        for i in idx
        for v in (
            [_transcribe(values[i][1], random.Random(values[i][1]))]
            if transcribe
            else misreadings(values, i)
        )
        if v != values[i][1]
    ]
    if not options:
        return None
    good = [o for o in options if changes(goal, values, o)]
    return rng.choice(good or options)


def decisive_exchange(values: Values, goal: Goal | None, rng: random.Random) -> Values | None:
    """Two neighbouring bars' values taken for each other, so the answer changes (None:
    no such pair)."""
    options = [exchanged(values, i, i + 1) for i in range(len(values) - 1)]
    good = [o for o in options if o != values and changes(goal, values, o)]
    return rng.choice(good) if good else None
