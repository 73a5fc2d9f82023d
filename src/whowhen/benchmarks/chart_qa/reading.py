"""How an agent reads the chart, pass by pass, deciding only from the visible history: the
readers of its read_chart calls and their observations (which bars are measured, the
values so far) and `read_next`, the next pass. The single agent and the orchestrator's
reader read the same way, so both policies share it.

Each single-bar reading step states the bars still to measure (the plan at the
first, what is left after), and the next steps measure what the latest statement lists;
the agent then works from the bars it measured, not from the overview. So a list cut
short (`reading_ops`) ends the reading early and the answer comes from fewer bars.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.benchmarks.chart_qa.actions import (
    BAR_NOTE,
    CLOSE,
    FIRST_BAR,
    FIRST_PAIR,
    LEFT,
    NEXT_BAR,
    OVERVIEW,
    PLAN,
    SAME,
    Values,
    parse_values,
)
from whowhen.benchmarks.chart_qa.goals import Goal
from whowhen.benchmarks.chart_qa.tasks import TaskInfo
from whowhen.runtime import Action, Step


def _observations(history: Sequence[Step], tool: str, start: int = 0) -> list[Step]:
    return [s for s in history[start:] if s.kind == "observation" and s.actor == tool]


_READS = re.compile(r"^Bar \d+ of \d+, (\w+): .*?so it reads (\d+)\.")
_REMEASURE = re.compile(r"measure (\w+) and (\w+) again")
CLOSE_GAP = 3
"""Bars within this many units of the bar they compete with are measured twice."""


def _reads(history: Sequence[Step], start: int, actor: str) -> list[tuple[Step, Step]]:
    """(call, observation) of each read_chart call of `actor` after `start`."""
    return [
        (history[i - 1], s)
        for i, s in enumerate(history)
        if i > start and s.kind == "observation" and s.actor == "read_chart"
        if history[i - 1].actor == actor
    ]


def _measured(reads: list[tuple[Step, Step]]) -> dict[str, list[int]]:
    """Single-bar measurements, name -> values in order."""
    out: dict[str, list[int]] = {}
    for _, obs in reads:
        m = _READS.match(obs.content)
        if m:
            out.setdefault(m.group(1), []).append(int(m.group(2)))
    return out


def _overview(reads: list[tuple[Step, Step]]) -> Values | None:
    """The values of the last whole-chart read among `reads` (None: none)."""
    overview = None
    for _, obs in reads:
        parsed = parse_values(obs.content)
        if parsed:
            overview = parsed[1]
    return overview


def overview_values(history: Sequence[Step], start: int, actor: str) -> Values | None:
    return _overview(_reads(history, start, actor))


def measured_values(
    history: Sequence[Step], start: int, actor: str, categories: Sequence[str]
) -> Values:
    """The bars `actor` measured one at a time since `start` (each one's latest reading), in
    the caption's order: what the agent works from (the overview only plans the order)."""
    latest = {name: vs[-1] for name, vs in _measured(_reads(history, start, actor)).items()}
    return [(n, latest[n]) for n in categories if n in latest]


def plan_order(goal: Goal, overview: Values) -> list[str]:
    """The bars to measure, in order: the named pair; every bar from the shortest up (for
    the highest) or the tallest down (for the lowest), so each new bar is held against the
    ones before; every bar left to right for a trend."""
    if goal.kind == "diff" and goal.pair:
        return list(goal.pair)
    if goal.kind in ("max", "min"):
        ranked = sorted(overview, key=lambda v: v[1], reverse=goal.kind == "min")
        return [n for n, _ in ranked]
    return [n for n, _ in overview]


def stated_plan(reads: list[tuple[Step, Step]]) -> list[str] | None:
    """The bars the agent last said it still has to measure, in order (its plan, or what it
    said is left; None: not stated yet)."""
    for call, _ in reversed(reads):
        m = PLAN.search(call.content or "")
        if m:
            return m.group(1).split(", ")
    return None


def _close_call(goal: Goal, values: Values, measured: dict[str, list[int]]):
    """(bar to measure again, the bar it competes with) of the first close call, or None:
    the runner-up of the highest or lowest, or the later bar of two neighbours a trend
    turns on, when within CLOSE_GAP units and measured only once."""
    by = dict(values)
    pairs: list[tuple[str, str]] = []
    if goal.kind in ("max", "min"):
        ranked = sorted(by, key=by.__getitem__, reverse=goal.kind == "max")
        pairs = [(ranked[1], ranked[0])] if len(ranked) > 1 else []
    elif goal.kind == "trend":
        names = [n for n, _ in values]
        pairs = [(b, a) for a, b in itertools.pairwise(names)]
    for name, other in pairs:
        if abs(by[name] - by[other]) <= CLOSE_GAP and len(measured.get(name, [])) == 1:
            return name, other
    return None


def last_note(history: Sequence[Step], start: int, actor: str) -> str:
    """What the agent says about its last single-bar reading ("Lyon reads 64."), or ""."""
    reads = _reads(history, start, actor)
    part = (reads[-1][0].tool_args or {}).get("part") if reads else None
    if part in (None, "axis"):
        return ""
    values_of = _measured(reads).get(str(part), [0])
    key, variants = ("same", SAME) if len(values_of) > 1 else ("note", BAR_NOTE)
    return phrasing.phrase(history, f"cq.{key}", variants, name=part, value=values_of[-1])


def read_next(
    actor: str,
    history: Sequence[Step],
    start: int,
    info: TaskInfo,
    goal: Goal,
    only: Sequence[str] = (),
) -> Action | None:
    """The next reading pass of `actor` since `start` (None: the reading is done): the
    overview (not for a difference: it names its two bars), each bar of the plan it
    states, the close calls; `only`: just re-measure these. The plan is the one the agent
    stated, so a plan cut short is followed."""
    reads = _reads(history, start, actor)

    def read(text: str, **args: str) -> Action:
        return Action(actor, text, "read_chart", dict(args))

    def say(key: str, variants: Sequence[str], **fields: object) -> str:
        return phrasing.phrase(history, f"cq.{key}", variants, **fields)

    overview = _overview(reads)
    plan = list(only) or stated_plan(reads)
    if plan is None and goal.kind == "diff" and goal.pair:  # two named bars: no overview
        plan = list(goal.pair)
        text = say("pair", FIRST_PAIR, plan=", ".join(plan), name=plan[0])
        return read(text, part=plan[0])
    if not only and overview is None and plan is None:
        return read(say("overview", OVERVIEW, ymax=info.ymax))
    measured = _measured(reads)
    note = last_note(history, start, actor)
    if plan is None:
        plan = plan_order(goal, overview or [])
        text = say("first", FIRST_BAR, n=len(overview or []), plan=", ".join(plan), name=plan[0])
        return read(text, part=plan[0])
    todo = [n for n in plan if n not in measured]
    if todo:
        left = say("left", LEFT, left=len(todo), rest=", ".join(todo))
        text = " ".join(t for t in (note, left, say("next", NEXT_BAR, name=todo[0])) if t)
        return read(text, part=todo[0])
    if only:
        return None
    values = measured_values(history, start, actor, info.categories)
    close = _close_call(goal, values, measured)
    if close:
        name, other = close
        by = dict(values)
        text = say(
            "close",
            CLOSE,
            name=name,
            value=by[name],
            other=other,
            other_value=by[other],
            gap=abs(by[name] - by[other]),
        )
        return read(f"{note} {text}".strip(), part=name)
    return None
