"""Error operators for the chart QA steps and messages, one per taxonomy mode.

Every replacement is built with the policies' own builders (`actions`, `policies`) fed a
wrong belief (a misread or exchanged value, the question restated wrongly, the operands the
other way round, the reading taken for done), so the step's text and its action agree and
the error shows only against the chart or the history (no step may contradict
itself). Since later steps take their belief from the steps (see `policies`), the wrong
belief is what the run goes on with; the operators choose a wrong belief that changes the
answer (`beliefs`).

Dropped (mode, system) pairs, each because only a self-contradictory step could express it:
- action.wrong_tool_argument, react: the calculator step states the values it subtracts,
  so a mistyped operand in the expression contradicts its own text (and a mistype carried
  into the text is a misread value, which `misread_value` covers).

Not covered, because no coherent form decides a run without an earlier error:
coordination.ignored_message (a step ignoring a message in a slip-free run repeats what
the verifier then catches, and the run recovers). Reading steps (read_chart) take only
planning.premature_finish (the taxonomy's action types), so a trend's or a difference's
reading steps, where a reading cut short cannot change the answer, take no error at all.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from whowhen.agents.scripted import addressee, tell
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.chart_qa.actions import (
    _REJECTED,
    CHART_LEAD,
    HANDOFF_LEAD,
    NOTE,
    PROPOSED,
    REPORTED_LEAD,
    Values,
    answer_action,
    approval_action,
    calc_action,
    diff_answer_action,
    parse_calc,
    parse_values,
    preamble,
)
from whowhen.benchmarks.chart_qa.beliefs import (
    decisive_exchange,
    decisive_misread,
    goal_of,
)
from whowhen.benchmarks.chart_qa.goals import Goal, conclude, deciding, distorted, goal_in, kind_of
from whowhen.benchmarks.chart_qa.reading import _REMEASURE
from whowhen.benchmarks.chart_qa.reading_ops import premature_reading
from whowhen.benchmarks.chart_qa.tasks import format_values
from whowhen.runtime import Action, Step


def _rebuild(action: Action, lead: str, new: Values, goal: Goal | None) -> Action | None:
    """`action` restated from the values `new`: a calculator step (the same difference, or
    the check re-derived), an answer, a report; None for any other step."""
    pre = _noted(preamble(action.content), new)
    if action.tool == "calculator":
        calc = parse_calc(action.content)
        if calc is None:
            return None
        pair = calc[:2]
        if goal is not None and goal.kind != "diff":
            pair = deciding(goal, new) or pair
        return calc_action(action.actor, lead, new, *pair, pre=pre)
    stated = kind_of(action.content)
    if action.tool == "final_answer":
        return answer_action(action.actor, lead, new, stated, pre) if stated else None
    to = _to(action) if action.tool is None else None
    if to is None:
        return None
    if stated is None:  # the reader's report: the list alone
        return tell(action.actor, to, f"{pre}{lead} {format_values(new)}.")
    sentence, answer = conclude(stated, new)
    return tell(
        action.actor, to, f"{pre}{lead} {format_values(new)}. {sentence} Proposed answer: {answer}."
    )


_LEADING = re.compile(r"^[^.]*\d[^.]*\. ")
"""A leading sentence with a number: the note on the last bar read."""


def _noted(pre: str, values: Values) -> str:
    """A step's opening note on the last bar read ("Bar Lyon reads 64."), restated with the
    value the step now lists for that bar, so the step does not contradict itself."""
    m = NOTE.match(pre)
    by = dict(values)
    name = next((v for k, v in (m.groupdict() if m else {}).items() if k[0] == "n" and v), None)
    if m is None or name not in by:
        return pre
    value = next(v for k, v in m.groupdict().items() if k[0] == "v" and v)
    return m.group(0).replace(f" {value}.", f" {by[name]}.") + pre[m.end() :]


def _to(action: Action) -> str | None:
    m = re.match(r"^To (\w+):", action.content)
    return m.group(1) if m else None


def _stated(action: Action) -> tuple[str, Values] | None:
    parsed = parse_values(action.content)
    return None if parsed is None or parsed[0] == HANDOFF_LEAD else parsed


@covers("react", "orchestrator")
def misread_value(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """perception.misread_value: a value read off the chart (or copied from a report) is
    carried on wrongly; the step's computation or conclusion follows from it."""
    parsed = _stated(action)
    if parsed is None:
        return None
    lead, values = parsed
    if lead == REPORTED_LEAD and action.tool is None:
        return None  # the analyst restates values it was handed (distorted_handoff)
    goal = goal_of(action.actor, history) or kind_of(action.content)
    among: tuple[str, ...] = ()
    if action.tool == "calculator":
        calc = parse_calc(action.content)
        if calc is None:
            return None
        among = calc[:2] if goal is None or goal.kind == "diff" else ()
    new = decisive_misread(values, goal, rng, among)
    return _rebuild(action, lead, new, goal) if new else None


@covers("react", "orchestrator")
def misidentified_object(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """perception.misidentified_object: two neighbouring bars are taken for each other when
    reading the chart, so one's value is pinned on the other's label, where that changes
    the answer. Applies to the agent's own reading (react's steps, the reader's report),
    not to values passed on."""
    parsed = parse_values(action.content)
    if parsed is None or parsed[0] != CHART_LEAD:
        return None
    goal = goal_of(action.actor, history) or kind_of(action.content)
    if action.tool == "calculator" and goal is not None and goal.kind == "diff":
        calc = parse_calc(action.content)
        names = [n for n, _ in parsed[1]]
        if calc is None or not set(calc[:2]) <= set(names):
            return None
    new = decisive_exchange(parsed[1], goal, rng)
    return _rebuild(action, parsed[0], new, goal) if new else None


def _restated(action: Action, goal: Goal, rng: random.Random) -> Action | None:
    """`action` with the question it states restated wrongly (for the analyst, its
    conclusion drawn for that question); None where the wrong question would not change
    the answer: a difference whose operands the analyst has already taken."""
    wrong = distorted(goal, rng)
    text = action.content.replace(goal.question, wrong.question)
    if goal.kind == "diff" and (
        action.actor in ("analyst", "verifier")
        or _to(action) == "verifier"
        or _REMEASURE.search(action.content)
    ):
        return None
    if action.actor == "analyst":
        parsed = parse_values(action.content)
        if parsed is None or parsed[0] != REPORTED_LEAD:
            return None
        sentence, answer = conclude(wrong, parsed[1])
        head = text[: text.index(REPORTED_LEAD)]
        text = f"{head}{REPORTED_LEAD} {format_values(parsed[1])}. {sentence} "
        text += f"Proposed answer: {answer}."
    return Action(action.actor, text)


@covers("orchestrator")
def distorted_handoff(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """coordination.distorted_handoff: a message passes on the question restated wrongly
    (highest for lowest, the pair the other way round, a trend taken for the highest or lowest;
    the analyst then answers that question), or one of the values the answer turns on
    garbled (the reader's report, the orchestrator's hand-off)."""
    if action.tool is not None or _to(action) is None:
        return None
    goal = goal_in(action.content)
    parsed = parse_values(action.content)
    options: list[Action | None] = []
    if goal is not None:
        options.append(_restated(action, goal, rng))
    if parsed is not None and parsed[0] != REPORTED_LEAD and kind_of(action.content) is None:
        lead, values = parsed
        new = decisive_misread(values, goal_of(action.actor, history), rng, transcribe=True)
        if new:
            old = f"{lead} {format_values(values)}."
            text = action.content.replace(old, f"{lead} {format_values(new)}.")
            head, body = text.split(": ", 1)
            options.append(Action(action.actor, f"{head}: {_noted(body, new)}"))
    kept = [o for o in options if o is not None and o.content != action.content]
    return rng.choice(kept) if kept else None


@covers("react", "orchestrator")
def wrong_operator(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """reasoning.wrong_operator: the difference asked for is taken the other way round
    (b - a), stated and computed consistently, so the answer comes out negated (not for
    react's check of a margin, whose sign the answer does not rest on)."""
    parsed = parse_values(action.content) if action.tool == "calculator" else None
    calc = parse_calc(action.content)
    if parsed is None or calc is None or parsed[0] not in (CHART_LEAD, REPORTED_LEAD):
        return None
    goal = goal_of(action.actor, history)
    if goal is not None and goal.kind != "diff":
        return None
    a, b = calc[:2]
    return calc_action(action.actor, parsed[0], parsed[1], b, a, pre=preamble(action.content))


@covers("react", "orchestrator")
def premature_finish(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """planning.premature_finish: the reading is taken for done before every bar the
    question needs is measured (a reading step lists fewer bars still to measure, and the
    answer is worked out from the bars measured), or, at react's difference step, the
    answer is given at once, taking one of the two values just read for the difference."""
    if action.tool == "read_chart":
        return premature_reading(action, rng, history)
    parsed = parse_values(action.content) if action.tool == "calculator" else None
    calc = parse_calc(action.content)
    if parsed is None or calc is None or parsed[0] != CHART_LEAD:
        return None
    goal = goal_of(action.actor, history)
    if goal is not None and goal.kind != "diff":
        return None
    a, b, va, vb = calc
    value = va if rng.random() < 0.7 else vb
    pre = _LEADING.sub("", preamble(action.content))  # the last bar's reading goes unsaid
    return diff_answer_action(action.actor, a, b, value, pre)


@covers("orchestrator")
def false_approval(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """verification.false_approval: the verifier approves the analyst's proposal it was
    about to send back (the answer is the one the analyst's last report proposed)."""
    if action.tool is not None or action.actor != "verifier":
        return None
    if not _REJECTED.match(action.content):
        return None
    reports = [
        s
        for s in history
        if s.kind == "message" and s.actor == "analyst" and addressee(s) == "orchestrator"
    ]
    proposed = PROPOSED.search(reports[-1].content) if reports else None
    return approval_action(proposed.group(1), history) if proposed else None


OPERATORS = {
    "perception.misread_value": misread_value,
    "perception.misidentified_object": misidentified_object,
    "coordination.distorted_handoff": distorted_handoff,
    "reasoning.wrong_operator": wrong_operator,
    "planning.premature_finish": premature_finish,
    "verification.false_approval": false_approval,
}
"""Taxonomy mode -> operator for chart QA's reading steps, calculator, final_answer and
messages."""
