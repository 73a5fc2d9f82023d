"""The question an agent believes it is answering (its goal), as the steps state it.

An error must be able to start at any step and reach the answer. So the
orchestrator restates the question in every message it sends, and each agent takes the
question from the most recent message that stated it to them, not from the task: a
question restated wrongly (highest for lowest, the pair the other way round, a trend
taken for a question about the highest or lowest bar) is then what the later steps
answer, coherently.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from whowhen.benchmarks.chart_qa.tasks import QUESTIONS, TaskInfo, trend_of
from whowhen.runtime import Step

Values = list[tuple[str, int]]
_FORMS = re.compile(
    r"Which city has the (?P<ext>highest|lowest) value\?"
    r"|How much higher is the value for (?P<a>[A-Z][a-z]+) than the value for (?P<b>[A-Z][a-z]+)\?"
    r"|From left to right, do the values rise, fall or neither\? Answer rise, fall or neither\."
)
_SENTENCES = {
    "rise": "From left to right every value is higher than the one before, so they rise.",
    "fall": "From left to right every value is lower than the one before, so they fall.",
    "neither": "From left to right the values go both up and down, so neither.",
}


@dataclass(frozen=True)
class Goal:
    """What the question asks: the highest or lowest bar, how much higher bar a is than
    bar b, or the trend from left to right."""

    kind: str
    pair: tuple[str, str] | None = None

    @property
    def question(self) -> str:
        if self.kind == "diff" and self.pair:
            return QUESTIONS["diff"].format(a=self.pair[0], b=self.pair[1])
        return QUESTIONS[self.kind]


def task_goal(info: TaskInfo) -> Goal:
    return Goal(info.kind, info.pair)


def goal_in(text: str) -> Goal | None:
    """The last question stated in a step's text (None: it states none)."""
    found = list(_FORMS.finditer(text))
    if not found:
        return None
    m = found[-1]
    if m["ext"]:
        return Goal("max" if m["ext"] == "highest" else "min")
    if m["a"]:
        return Goal("diff", (m["a"], m["b"]))
    return Goal("trend")


def stated_goal(steps: Sequence[Step], default: Goal) -> Goal:
    """The question as the most recent of `steps` that states one puts it."""
    for s in reversed(steps):
        goal = goal_in(s.content or "")
        if goal is not None:
            return goal
    return default


def distorted(goal: Goal, rng: random.Random) -> Goal:
    """The question as a careless restatement puts it: highest for lowest (and back), the
    pair the other way round, a trend question taken for one about the highest or lowest
    bar (each wording the policies use for some task, so no new phrase gives it away)."""
    if goal.kind in ("max", "min"):
        return Goal("min" if goal.kind == "max" else "max")
    if goal.kind == "diff" and goal.pair:
        return Goal("diff", (goal.pair[1], goal.pair[0]))
    return Goal(rng.choice(("max", "min")))


def conclude(goal: Goal | str, values: Values) -> tuple[str, str]:
    """(the reasoning sentence, the answer) for a max, min or trend question."""
    goal = Goal(goal) if isinstance(goal, str) else goal
    if goal.kind == "trend":
        word = trend_of([v for _, v in values])
        return _SENTENCES[word], word
    pick = max if goal.kind == "max" else min
    name, value = pick(values, key=lambda item: item[1])
    return f"The {'highest' if goal.kind == 'max' else 'lowest'} value is {name}'s {value}.", name


def answer_of(goal: Goal, values: Values) -> str | None:
    """The answer the values give to the question (None: a pair bar is missing)."""
    if goal.kind == "diff":
        by = dict(values)
        a, b = goal.pair or ("", "")
        return str(by[a] - by[b]) if a in by and b in by else None
    return conclude(goal, values)[1] if values else None


def kind_of(text: str) -> Goal | None:
    """The question a step's stated conclusion answers (None: it states no conclusion)."""
    if "highest value is" in text:
        return Goal("max")
    if "lowest value is" in text:
        return Goal("min")
    return Goal("trend") if any(s in text for s in _SENTENCES.values()) else None


def deciding(goal: Goal, values: Values) -> tuple[str, str] | None:
    """The two bars the answer turns on, ordered so the first minus the second is what a
    check computes: the highest (lowest) and runner-up, the named pair, or the closest
    neighbours of a trend (the later minus the earlier)."""
    if goal.kind == "diff":
        return goal.pair if goal.pair and set(goal.pair) <= set(dict(values)) else None
    if len(values) < 2:
        return None
    if goal.kind in ("max", "min"):
        ranked = sorted(values, key=lambda v: v[1], reverse=goal.kind == "max")
        top, runner = ranked[0][0], ranked[1][0]
        return (top, runner) if goal.kind == "max" else (runner, top)
    earlier, later = min(itertools.pairwise(values), key=lambda p: abs(p[0][1] - p[1][1]))
    return later[0], earlier[0]
