"""How an agent reads the chart, pass by pass, deciding only from the visible history: the
readers of its read_chart calls and their observations (which bars are measured, the
values so far) and `read_next`, the next pass. The single agent and the orchestrator's
reader read the same way, so both policies share it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.benchmarks.chart_qa.actions import (
    AXIS,
    BAR_NOTE,
    CLOSE,
    FIRST_BAR,
    LEFT,
    NEXT_BAR,
    OVERVIEW,
    SAME,
    Values,
    parse_values,
)
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


def _reads_any(history: Sequence[Step], start: int) -> list[tuple[Step, Step]]:
    return [
        (history[i - 1], s)
        for i, s in enumerate(history)
        if i > start and s.kind == "observation" and s.actor == "read_chart"
    ]


def _measured(reads: list[tuple[Step, Step]]) -> dict[str, list[int]]:
    """Single-bar measurements, name -> values in order."""
    out: dict[str, list[int]] = {}
    for _, obs in reads:
        m = _READS.match(obs.content)
        if m:
            out.setdefault(m.group(1), []).append(int(m.group(2)))
    return out


def _chart_values(
    history: Sequence[Step], start: int = 0, actor: str | None = None
) -> Values | None:
    """The overview's values with each single-bar measurement put in (None: no overview):
    the reads of `actor` after `start` (of anyone when `actor` is None)."""
    reads = _reads(history, start, actor) if actor else _reads_any(history, start)
    overview = None
    for _, obs in reads:
        parsed = parse_values(obs.content)
        if parsed:
            overview = parsed[1]
    if overview is None:
        return None
    latest = {name: vs[-1] for name, vs in _measured(reads).items()}
    return [(n, latest.get(n, v)) for n, v in overview]


def _needed(info: TaskInfo) -> list[str]:
    """The bars a question needs measured one at a time."""
    return list(info.pair) if info.kind == "diff" and info.pair else list(info.categories)


def _close_call(info: TaskInfo, values: Values, measured: dict[str, list[int]]):
    """(bar to measure again, the bar it competes with) of the first close call, or None:
    the runner-up of the highest or lowest, or the later bar of two neighbours a trend
    turns on, when within CLOSE_GAP units and measured only once."""
    by = dict(values)
    pairs: list[tuple[str, str]] = []
    if info.kind in ("max", "min"):
        ranked = sorted(by, key=by.__getitem__, reverse=info.kind == "max")
        pairs = [(ranked[1], ranked[0])] if len(ranked) > 1 else []
    elif info.kind == "trend":
        names = [n for n, _ in values]
        pairs = [(b, a) for a, b in itertools.pairwise(names)]
    for name, other in pairs:
        if abs(by[name] - by[other]) <= CLOSE_GAP and len(measured.get(name, [])) == 1:
            return name, other
    return None


def read_next(
    actor: str,
    history: Sequence[Step],
    start: int,
    info: TaskInfo,
    only: Sequence[str] = (),
) -> Action | None:
    """The next reading pass of `actor` since `start` (None: the reading is done): the
    axis, the overview, each needed bar, the close calls; `only`: just re-measure these."""
    reads = _reads(history, start, actor)
    parts = [(c.tool_args or {}).get("part") for c, _ in reads]

    def read(text: str, **args: str) -> Action:
        return Action(actor, text, "read_chart", dict(args))

    def say(key: str, variants: Sequence[str], **fields: object) -> str:
        return phrasing.phrase(history, f"cq.{key}", variants, **fields)

    if not only:
        if "axis" not in parts:
            return read(say("axis", AXIS), part="axis")
        if None not in parts:
            return read(say("overview", OVERVIEW, ymax=info.ymax))
    measured = _measured(reads)
    note = ""
    if reads and parts[-1] not in (None, "axis"):
        name = str(parts[-1])
        values_of = measured.get(name, [0])
        if len(values_of) > 1:
            note = say("same", SAME, name=name)
        else:
            note = say("note", BAR_NOTE, name=name, value=values_of[-1])
    needed = list(only) or _needed(info)
    todo = (
        [n for n in needed if n not in measured]
        if not only
        else [n for n in needed if len(measured.get(n, [])) < 1]
    )
    if todo:
        if not only and parts[-1] is None:
            text = say("first", FIRST_BAR, n=len(info.categories), name=todo[0])
        else:
            left = say("left", LEFT, left=len(todo))
            text = " ".join(t for t in (note, left, say("next", NEXT_BAR, name=todo[0])) if t)
        return read(text, part=todo[0])
    values = _chart_values(history, start, actor) if not only else None
    close = _close_call(info, values, measured) if values else None
    if close:
        name, other = close
        by = dict(values or [])
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
