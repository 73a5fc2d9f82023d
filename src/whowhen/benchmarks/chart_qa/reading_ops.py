"""premature_finish at a reading step: the agent takes its reading for done too early.

A reading step states the bars the agent still means to measure (its plan at the first
bar, then what is left at each later bar), and the later steps measure what the latest
statement lists. The error is that list cut short: the same step, in the policy's own
wording, naming fewer bars to go, so the reading ends before the bars the answer turns on
are measured and the agent works from the rest. Only where the bars left out change the
answer (judged against the agent's own overview of the chart).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.benchmarks.chart_qa.actions import LEFT, PLAN
from whowhen.benchmarks.chart_qa.beliefs import changes, chart_values, goal_of
from whowhen.benchmarks.chart_qa.reading import _measured, _reads
from whowhen.runtime import Action, Step


def _start(history: Sequence[Step], actor: str) -> int:
    """Where `actor`'s current turn began (the orchestrator's last message to it)."""
    if actor == "assistant":
        return 0
    asked = [
        s.step
        for s in history
        if s.kind == "message"
        and s.actor == "orchestrator"
        and s.content.startswith(f"To {actor}:")
    ]
    return asked[-1] if asked else 0


def premature_reading(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """The read_chart step with its list of bars to go cut short (None: no list, or
    nothing left out would change the answer)."""
    stated = PLAN.search(action.content)
    part = (action.tool_args or {}).get("part")
    if stated is None or action.actor not in ("assistant", "reader"):
        return None
    names = stated.group(1).split(", ")
    goal, chart = goal_of(action.actor, history), chart_values(history, action.actor)
    if goal is None or chart is None or not names or names[0] != part:
        return None
    done = set(_measured(_reads(history, _start(history, action.actor), action.actor)))
    least = 3 if goal.kind == "trend" else 2  # a trend needs three bars to be one at all
    cuts = [
        names[:k]
        for k in range(1, len(names))
        if len(done | set(names[:k])) >= least
        and changes(goal, chart, [(n, v) for n, v in chart if n in done or n in names[:k]])
    ]
    if not cuts:
        return None
    cut = rng.choice(cuts[-3:])
    if stated.group(0).startswith("in this order"):
        old, new = stated.group(0), f"in this order: {', '.join(cut)}."
    else:
        old, new = (
            phrasing.phrase(history, "cq.left", LEFT, left=len(v), rest=", ".join(v))
            for v in (names, cut)
        )
    if old not in action.content:
        return None
    return Action(action.actor, action.content.replace(old, new), action.tool, action.tool_args)
