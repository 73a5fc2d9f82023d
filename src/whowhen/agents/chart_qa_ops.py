"""Chart QA step wording (shared by the policies in `agents.chart_qa`) and the error
operators that rewrite those steps.

Every step that carries chart values writes them as `Name value, ...` after a lead phrase,
and every difference as `A minus B is va - vb.` with the expression `(va - vb)`, so an
operator can change one value, exchange two bars, reverse the subtraction, or finish
early, and the result still reads exactly like a step the policy writes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from whowhen.agents.scripted import addressee, tell
from whowhen.benchmarks.chart_qa import TaskInfo, format_values, parse_task, trend_of
from whowhen.runtime import Action, Step

Values = list[tuple[str, int]]
CHART_LEAD = "The chart reads"  # values the agent itself read off the chart
REPORTED_LEAD = "The reported values are"  # values the analyst got from the orchestrator
HANDOFF_LEAD = "The reader reports"  # values the orchestrator passes on
TOOL_LEAD = "Bars read from the image, left to right:"  # read_chart's observation
_LIST = r"((?:[A-Z][a-z]+ \d+, )*[A-Z][a-z]+ \d+)"
_LISTED = re.compile(rf"({CHART_LEAD}|{REPORTED_LEAD}|{HANDOFF_LEAD}|{TOOL_LEAD}) {_LIST}\.")
_CALC = re.compile(r"(\w+) minus (\w+) is (\d+) - (\d+)\.")
EXPR = re.compile(r"^\((\d+) - (\d+)\)$")
DIFF_REPORT = re.compile(
    r"(\w+) (\d+) minus (\w+) (\d+) is (-?[\d.]+)\. Proposed answer: (\S+?)\.$"
)
PROPOSED = re.compile(r"Proposed answer: (\S+?)\.$")
_REJECTED = re.compile(r"^To orchestrator: Check failed: ")
_SENTENCES = {
    "rise": "From left to right every value is higher than the one before, so they rise.",
    "fall": "From left to right every value is lower than the one before, so they fall.",
    "neither": "From left to right the values go both up and down, so neither.",
}


# --- the policies' wording ---------------------------------------------------------------


def parse_values(text: str) -> tuple[str, Values] | None:
    """(lead phrase, values) of the first value list in a step's text."""
    m = _LISTED.search(text)
    if not m:
        return None
    pairs = [item.rsplit(" ", 1) for item in m.group(2).split(", ")]
    return m.group(1), [(name, int(value)) for name, value in pairs]


def parse_calc(text: str) -> tuple[str, str, str, str] | None:
    """(a, b, stated va, stated vb) of a difference step's text `a minus b is va - vb.`"""
    m = _CALC.search(text)
    return (m.group(1), m.group(2), m.group(3), m.group(4)) if m else None


def conclude(kind: str, values: Values) -> tuple[str, str]:
    """(the reasoning sentence, the answer) for a max, min or trend question."""
    if kind == "trend":
        word = trend_of([v for _, v in values])
        return _SENTENCES[word], word
    pick = max if kind == "max" else min
    name, value = pick(values, key=lambda item: item[1])
    return f"The {'highest' if kind == 'max' else 'lowest'} value is {name}'s {value}.", name


def kind_of(text: str) -> str | None:
    """The question kind a step's stated conclusion answers (None: no conclusion)."""
    if "highest value is" in text:
        return "max"
    if "lowest value is" in text:
        return "min"
    return "trend" if any(s in text for s in _SENTENCES.values()) else None


def calc_action(
    actor: str,
    lead: str,
    values: Values,
    a: str,
    b: str,
    expr: str | None = None,
) -> Action:
    """A difference step: the values, the stated computation and the expression sent
    (`expr` differs from the stated one only for an action error).

    The expression is parenthesised: the arithmetic benchmark's core operators rewrite a
    bare `a - b` into their own "running total" wording, which would read as a marker here."""
    by_name = dict(values)
    va, vb = by_name[a], by_name[b]
    return Action(
        actor,
        f"{lead} {format_values(values)}. {a} minus {b} is {va} - {vb}.",
        "calculator",
        {"expression": expr or f"({va} - {vb})"},
    )


def answer_action(actor: str, lead: str, values: Values, kind: str) -> Action:
    sentence, answer = conclude(kind, values)
    return Action(
        actor,
        f"{lead} {format_values(values)}. {sentence} The answer is {answer}.",
        "final_answer",
        {"answer": answer},
    )


def diff_answer_action(actor: str, a: str, b: str, result: str) -> Action:
    return Action(
        actor,
        f"{a} is higher than {b} by {result}. The answer is {result}.",
        "final_answer",
        {"answer": result},
    )


def approval_action(answer: str) -> Action:
    """The verifier's approval: the analyst's proposed answer becomes the final answer."""
    return Action(
        "verifier",
        f"The analyst's answer agrees with the reader's values. Final answer: {answer}.",
        "final_answer",
        {"answer": answer},
    )


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


def misread_value(action: Action, rng: random.Random) -> Action | None:
    """perception.misread_value: a value read off the chart is carried on wrongly."""
    parsed = parse_values(action.content)
    if parsed is None or parsed[0] == HANDOFF_LEAD:
        return None
    lead, values = parsed
    if action.tool == "calculator":
        calc = parse_calc(action.content)
        if calc is None:
            return None
        a, b = calc[:2]
        new = _replace(values, (i := _pick(values, (a, b), rng)), _misread(values, i, rng))
        return calc_action(action.actor, lead, new, a, b)
    kind = kind_of(action.content)
    i = rng.randrange(len(values))
    new = _replace(values, i, _misread(values, i, rng))
    if action.tool == "final_answer" and kind is not None:
        return answer_action(action.actor, lead, new, kind)
    to = _to(action)
    if action.tool is not None or to is None:
        return None
    if kind is None:  # the reader's report: the list alone
        return tell(action.actor, to, f"{lead} {format_values(new)}.")
    sentence, answer = conclude(kind, new)
    return tell(
        action.actor, to, f"{lead} {format_values(new)}. {sentence} Proposed answer: {answer}."
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


def wrong_tool_argument(action: Action, rng: random.Random) -> Action | None:
    """action.wrong_tool_argument: the stated difference is right, the expression sent has
    one operand mistyped."""
    parsed = parse_values(action.content) if action.tool == "calculator" else None
    calc = parse_calc(action.content)
    if parsed is None or calc is None:
        return None
    a, b, va, vb = calc
    if rng.random() < 0.5:
        va = str(_transcribe(int(va), rng))
    else:
        vb = str(_transcribe(int(vb), rng))
    return calc_action(action.actor, parsed[0], parsed[1], a, b, expr=f"({va} - {vb})")


def _exchanged(values: Values, index: int, rng: random.Random) -> Values:
    """The values with bar `index` and a neighbouring bar taken for each other."""
    j = rng.choice([k for k in (index - 1, index + 1) if 0 <= k < len(values)])
    swapped = {index: values[j][1], j: values[index][1]}
    return [(n, swapped.get(i, v)) for i, (n, v) in enumerate(values)]


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
        return calc_action(action.actor, lead, new, a, b)
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
    if action.tool == "final_answer":
        return answer_action(action.actor, lead, new, kind)
    to = _to(action)
    if to is None or stated is not None:
        return None
    return tell(action.actor, to, f"{lead} {format_values(new)}.")  # the reader's report


def wrong_operator(action: Action, rng: random.Random) -> Action | None:
    """reasoning.wrong_operator: the difference is taken the other way round (b - a),
    stated and computed consistently, so the answer comes out negated."""
    parsed = parse_values(action.content) if action.tool == "calculator" else None
    calc = parse_calc(action.content)
    if parsed is None or calc is None:
        return None
    a, b = calc[:2]
    return calc_action(action.actor, parsed[0], parsed[1], b, a)


def premature_finish(action: Action, rng: random.Random) -> Action | None:
    """planning.premature_finish: at the difference step, one of the two values read is
    given as the answer before anything is computed (react answers; the analyst proposes)."""
    parsed = parse_values(action.content) if action.tool == "calculator" else None
    calc = parse_calc(action.content)
    if parsed is None or calc is None:
        return None
    lead, values = parsed
    name = calc[0] if rng.random() < 0.7 else calc[1]
    value = str(dict(values)[name])
    said = f"{lead} {format_values(values)}. The value for {name} is {value}."
    if lead == CHART_LEAD:
        return Action(
            action.actor, f"{said} The answer is {value}.", "final_answer", {"answer": value}
        )
    return tell(action.actor, "orchestrator", f"{said} Proposed answer: {value}.")


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
    return approval_action(proposed.group(1)) if proposed else None


OPERATORS = {
    "perception.misread_value": misread_value,
    "perception.misidentified_object": misidentified_object,
    "coordination.distorted_handoff": distorted_handoff,
    "action.wrong_tool_argument": wrong_tool_argument,
    "reasoning.wrong_operator": wrong_operator,
    "planning.premature_finish": premature_finish,
    "verification.false_approval": false_approval,
}
"""Taxonomy mode -> operator for chart QA's calculator, final_answer and messages."""
