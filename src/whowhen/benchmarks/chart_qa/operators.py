"""Error operators for the chart QA steps and messages, one per taxonomy mode.

Every replacement is built with the policies' own builders (`actions`) fed a wrong belief
(a misread or exchanged value, the operands the other way round, a difference taken for
done), so the step's text and its action agree and the error shows only against the chart
or the history (issue 19: no step may contradict itself).

Dropped (mode, system) pairs, each because only a self-contradictory step could express it:
- action.wrong_tool_argument, react: the calculator step states the values it subtracts,
  so a mistyped operand in the expression contradicts its own text (and a mistype carried
  into the text is a misread value, which `misread_value` covers).
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
    PROPOSED,
    Values,
    answer_action,
    approval_action,
    calc_action,
    conclude,
    diff_answer_action,
    kind_of,
    parse_calc,
    parse_values,
    preamble,
)
from whowhen.benchmarks.chart_qa.tasks import TaskInfo, format_values, parse_task
from whowhen.runtime import Action, Step

# --- operators ---------------------------------------------------------------------------


def _misread(values: Values, index: int, rng: random.Random) -> int:
    """A plausible misreading of bar `index`: a neighbouring bar's value or a few units off."""
    value = values[index][1]
    neighbours = [
        values[j][1]
        for j in (index - 1, index + 1)
        if 0 <= j < len(values) and values[j][1] != value
    ]
    if neighbours and rng.random() < 0.5:
        return rng.choice(neighbours)
    offset = rng.choice([-3, -2, -1, 1, 2, 3])
    return value + offset if value + offset > 0 else value + abs(offset)


def _transcribe(value: int, rng: random.Random) -> int:
    """A garbled copy of a value: digits swapped, or off by ten."""
    text = str(value)
    if len(text) == 2 and text[0] != text[1] and text[1] != "0" and rng.random() < 0.6:
        return int(text[::-1])
    return value + 10 if value < 50 else value - 10


def _replace(values: Values, index: int, value: int) -> Values:
    return [(n, value if i == index else v) for i, (n, v) in enumerate(values)]


def _pick(values: Values, names: Sequence[str], rng: random.Random) -> int:
    candidates = [i for i, (n, _) in enumerate(values) if n in names] or list(range(len(values)))
    return rng.choice(candidates)


def _to(action: Action) -> str | None:
    m = re.match(r"^To (\w+):", action.content)
    return m.group(1) if m else None


def _task(history: Sequence[Step]) -> TaskInfo | None:
    try:
        return parse_task(history[0].content) if history else None
    except ValueError:
        return None


@covers("react", "orchestrator")
def misread_value(action: Action, rng: random.Random) -> Action | None:
    """perception.misread_value: a value read off the chart is carried on wrongly."""
    parsed = parse_values(action.content)
    if parsed is None or parsed[0] == HANDOFF_LEAD:
        return None
    lead, values = parsed
    pre = preamble(action.content)
    if action.tool == "calculator":
        calc = parse_calc(action.content)
        if calc is None:
            return None
        a, b = calc[:2]
        new = _replace(values, (i := _pick(values, (a, b), rng)), _misread(values, i, rng))
        return calc_action(action.actor, lead, new, a, b, pre=pre)
    kind = kind_of(action.content)
    i = rng.randrange(len(values))
    new = _replace(values, i, _misread(values, i, rng))
    if action.tool == "final_answer" and kind is not None:
        return answer_action(action.actor, lead, new, kind, pre)
    to = _to(action)
    if action.tool is not None or to is None:
        return None
    if kind is None:  # the reader's report: the list alone
        return tell(action.actor, to, f"{pre}{lead} {format_values(new)}.")
    sentence, answer = conclude(kind, new)
    return tell(
        action.actor,
        to,
        f"{pre}{lead} {format_values(new)}. {sentence} Proposed answer: {answer}.",
    )


def _relevant(values: Values, history: Sequence[Step]) -> list[int]:
    """The bars the question turns on (the named pair; the two highest or lowest), or every
    bar when the question is a trend or unknown."""
    info, names = _task(history), [n for n, _ in values]
    if info is None or info.kind == "trend":
        return list(range(len(values)))
    if info.kind == "diff":
        return [names.index(n) for n in info.pair or () if n in names] or list(range(len(names)))
    ranked = sorted(range(len(values)), key=lambda i: values[i][1], reverse=info.kind == "max")
    return ranked[:2]


@covers("orchestrator")
def distorted_handoff(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """coordination.distorted_handoff: a message passes on one of the values the question
    turns on garbled (the reader's report, or the orchestrator's hand-off of its values)."""
    parsed = parse_values(action.content) if action.tool is None else None
    if parsed is None or kind_of(action.content) is not None:
        return None
    lead, values = parsed
    i = rng.choice(_relevant(values, history))
    new = _replace(values, i, _transcribe(values[i][1], rng))
    old, changed = f"{lead} {format_values(values)}.", f"{lead} {format_values(new)}."
    return Action(action.actor, action.content.replace(old, changed, 1))


def _exchanged(values: Values, index: int, rng: random.Random) -> Values:
    """The values with bar `index` and a neighbouring bar taken for each other."""
    j = rng.choice([k for k in (index - 1, index + 1) if 0 <= k < len(values)])
    swapped = {index: values[j][1], j: values[index][1]}
    return [(n, swapped.get(i, v)) for i, (n, v) in enumerate(values)]


@covers("react")
def misidentified_object(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """perception.misidentified_object: the bar the question is about (the highest or lowest
    one, or a named one) and its neighbour are taken for each other when reading the chart,
    so its value is pinned on the neighbour's label. Applies to the agent's own reading
    (react's answer or calculation, the reader's report), not to values passed on."""
    parsed = parse_values(action.content)
    if parsed is None or parsed[0] != CHART_LEAD:
        return None
    lead, values = parsed
    names = [n for n, _ in values]
    if action.tool == "calculator":
        calc = parse_calc(action.content)
        if calc is None:
            return None
        a, b = calc[:2]
        new = _exchanged(values, names.index(rng.choice((a, b))), rng)
        return calc_action(action.actor, lead, new, a, b, pre=preamble(action.content))
    info = _task(history)
    stated = kind_of(action.content)
    if action.tool is not None and (action.tool != "final_answer" or stated is None):
        return None
    kind = stated or (info.kind if info else None)
    if kind in ("max", "min"):
        pick = max if kind == "max" else min
        target = values.index(pick(values, key=lambda item: item[1]))
    elif kind == "diff" and info is not None and info.pair and set(info.pair) <= set(names):
        target = names.index(rng.choice(info.pair))
    else:
        return None
    new = _exchanged(values, target, rng)
    pre = preamble(action.content)
    if action.tool == "final_answer":
        return answer_action(action.actor, lead, new, kind, pre)
    to = _to(action)
    if to is None or stated is not None:
        return None
    return tell(action.actor, to, f"{pre}{lead} {format_values(new)}.")  # the reader's report


@covers("react", "orchestrator")
def wrong_operator(action: Action, rng: random.Random) -> Action | None:
    """reasoning.wrong_operator: the difference is taken the other way round (b - a),
    stated and computed consistently, so the answer comes out negated."""
    parsed = parse_values(action.content) if action.tool == "calculator" else None
    calc = parse_calc(action.content)
    if parsed is None or calc is None:
        return None
    a, b = calc[:2]
    return calc_action(action.actor, parsed[0], parsed[1], b, a, pre=preamble(action.content))


@covers("react")
def premature_finish(action: Action, rng: random.Random) -> Action | None:
    """planning.premature_finish: at react's difference step the agent answers at once in
    its answer wording, taking one of the two values it has just read for the difference
    ("Split is higher than Porto by 68. The answer is 68.") instead of computing it. Not
    for the analyst: its report states both values and the result, so an early proposal
    would contradict itself."""
    parsed = parse_values(action.content) if action.tool == "calculator" else None
    calc = parse_calc(action.content)
    if parsed is None or calc is None or parsed[0] != CHART_LEAD:
        return None
    a, b, va, vb = calc
    value = va if rng.random() < 0.7 else vb
    return diff_answer_action(action.actor, a, b, value, preamble(action.content))


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
"""Taxonomy mode -> operator for chart QA's calculator, final_answer and messages."""
