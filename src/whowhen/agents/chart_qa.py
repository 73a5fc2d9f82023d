"""Scripted reference policies for chart QA, deciding only from the visible history.

react: read_chart, then (for a difference) one calculator call, then the answer.
orchestrator: the orchestrator has the reader read the chart, hands the reader's values
and the question to the analyst, and the analyst's proposal to the verifier; the verifier
checks the analyst's values and arithmetic against the reader's report (it does not look
at the chart again), so a misread in the reader's report propagates, while an analyst's
slip is caught and redone.

Every step that carries chart values writes them as `Name value, ...`, so the operators
below can change one value the way a misreading or a garbled hand-off would.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from whowhen.agents.scripted import ScriptedOrchestrator, ScriptedReact, addressee, tell
from whowhen.benchmarks.arithmetic import calculate
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
_EXPR = re.compile(r"^\((\d+) - (\d+)\)$")
_DIFF_REPORT = re.compile(
    r"(\w+) (\d+) minus (\w+) (\d+) is (-?[\d.]+)\. Proposed answer: (\S+?)\.$"
)
_PROPOSED = re.compile(r"Proposed answer: (\S+?)\.$")
_SENTENCES = {
    "rise": "From left to right every value is higher than the one before, so they rise.",
    "fall": "From left to right every value is lower than the one before, so they fall.",
    "neither": "From left to right the values go both up and down, so neither.",
}


def parse_values(text: str) -> tuple[str, Values] | None:
    """(lead phrase, values) of the first value list in a step's text."""
    m = _LISTED.search(text)
    if not m:
        return None
    pairs = [item.rsplit(" ", 1) for item in m.group(2).split(", ")]
    return m.group(1), [(name, int(value)) for name, value in pairs]


def conclude(kind: str, values: Values) -> tuple[str, str]:
    """(the reasoning sentence, the answer) for a max, min or trend question."""
    if kind == "trend":
        word = trend_of([v for _, v in values])
        return _SENTENCES[word], word
    pick = max if kind == "max" else min
    name, value = pick(values, key=lambda item: item[1])
    return f"The {'highest' if kind == 'max' else 'lowest'} value is {name}'s {value}.", name


def _kind_of(text: str) -> str | None:
    if "highest value is" in text:
        return "max"
    if "lowest value is" in text:
        return "min"
    return "trend" if any(s in text for s in _SENTENCES.values()) else None


def calc_action(
    actor: str, lead: str, values: Values, a: str, b: str, expr: str | None = None
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


def _observations(history: Sequence[Step], tool: str, start: int = 0) -> list[Step]:
    return [s for s in history[start:] if s.kind == "observation" and s.actor == tool]


def _chart_values(history: Sequence[Step], start: int = 0) -> Values | None:
    for step in reversed(_observations(history, "read_chart", start)):
        parsed = parse_values(step.content)
        if parsed:
            return parsed[1]
    return None


class ChartReactSystem(ScriptedReact):
    """One agent: read the chart, compute a difference with the calculator, answer."""

    def act(self, history: Sequence[Step]) -> Action:
        info = parse_task(history[0].content)
        values = _chart_values(history)
        if values is None:
            return Action(
                "assistant", "I will read the bar values off the chart.", "read_chart", {}
            )
        if info.kind != "diff" or info.pair is None:
            return answer_action("assistant", CHART_LEAD, values, info.kind)
        results = _observations(history, "calculator")
        if not results:
            return calc_action("assistant", CHART_LEAD, values, *info.pair)
        return diff_answer_action("assistant", *info.pair, results[-1].content)


def _messages(history: Sequence[Step], sender: str, to: str, start: int = 0) -> list[Step]:
    return [
        s
        for s in history[start:]
        if s.kind == "message" and s.actor == sender and addressee(s) == to
    ]


def _since(history: Sequence[Step]) -> int:
    """Index of the verifier's last message (a rejection), 0 before it spoke."""
    return max((s.step for s in _messages(history, "verifier", "orchestrator")), default=0)


def _reader_values(history: Sequence[Step]) -> Values | None:
    reports = _messages(history, "reader", "orchestrator")
    parsed = parse_values(reports[-1].content) if reports else None
    return parsed[1] if parsed else None


class ChartOrchestratorSystem(ScriptedOrchestrator):
    """Orchestrator, reader (reads the chart), analyst (computes), verifier (checks)."""

    agents = ("orchestrator", "reader", "analyst", "verifier")

    def orchestrate(self, history: Sequence[Step]) -> Action:
        info = parse_task(history[0].content)
        values = _reader_values(history)
        if values is None:
            return tell(
                "orchestrator",
                "reader",
                "Please read the bar values off the chart with read_chart and report them.",
            )
        if not _messages(history, "analyst", "orchestrator", _since(history) + 1):
            return tell(
                "orchestrator",
                "analyst",
                f"{HANDOFF_LEAD} {format_values(values)}. Please answer: {info.question}",
            )
        return tell(
            "orchestrator",
            "verifier",
            "The analyst has proposed an answer. Please check it against the reader's values.",
        )

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        asked = _messages(history, "orchestrator", worker)
        start = asked[-1].step if asked else 0
        if worker == "reader":
            values = _chart_values(history, start)
            if values is None:
                return Action(
                    "reader", "I will read the bar values off the chart.", "read_chart", {}
                )
            return tell("reader", "orchestrator", f"{CHART_LEAD} {format_values(values)}.")
        return self._analyse(history, start)

    def _analyse(self, history: Sequence[Step], start: int) -> Action:
        info = parse_task(history[0].content)
        parsed = parse_values(history[start].content) if start else None
        if parsed is None:
            return tell(
                "analyst", "orchestrator", "I did not get the chart values. Please send them."
            )
        values = parsed[1]
        if info.kind != "diff" or info.pair is None:
            sentence, answer = conclude(info.kind, values)
            return tell(
                "analyst",
                "orchestrator",
                f"{REPORTED_LEAD} {format_values(values)}. {sentence} Proposed answer: {answer}.",
            )
        missing = [name for name in info.pair if name not in dict(values)]
        if missing:
            return tell("analyst", "orchestrator", f"The values I got do not include {missing[0]}.")
        calcs = [s for s in history[start:] if s.actor == "analyst" and s.tool == "calculator"]
        results = _observations(history, "calculator", start)
        if not calcs or not results:
            return calc_action("analyst", REPORTED_LEAD, values, *info.pair)
        m = _EXPR.match(str((calcs[-1].tool_args or {}).get("expression", "")))
        va, vb = m.groups() if m else ("?", "?")
        a, b = info.pair
        result = results[-1].content
        return tell(
            "analyst",
            "orchestrator",
            f"{a} {va} minus {b} {vb} is {result}. Proposed answer: {result}.",
        )

    def verify(self, history: Sequence[Step]) -> Action:
        info = parse_task(history[0].content)
        reports = _messages(history, "analyst", "orchestrator")
        values = _reader_values(history)
        report = reports[-1].content if reports else ""
        proposed = _PROPOSED.search(report)
        problem = _check(info, dict(values or []), report) if values else "no chart values"
        if problem or not proposed:
            return tell(
                "verifier",
                "orchestrator",
                f"Check failed: {problem or 'no proposed answer'}. Please redo the analysis.",
            )
        answer = proposed.group(1)
        return Action(
            "verifier",
            f"The analyst's answer agrees with the reader's values. Final answer: {answer}.",
            "final_answer",
            {"answer": answer},
        )


def _check(info: TaskInfo, reader: dict[str, int], report: str) -> str | None:
    """What is wrong with the analyst's report against the reader's values (None if fine)."""
    if info.kind == "diff" and info.pair:
        m = _DIFF_REPORT.search(report)
        if not m:
            return "the analyst's report does not show the computation"
        a, va, b, vb, result, proposed = m.groups()
        for name, value in ((a, va), (b, vb)):
            if reader.get(name) != int(value):
                return f"the reader reports {name} at {reader.get(name)}, not {value}"
        if calculate(f"{va} - {vb}") != result or proposed != result:
            return f"{va} - {vb} is {calculate(f'{va} - {vb}')}, not {proposed}"
        return None
    proposed = _PROPOSED.search(report)
    _, answer = conclude(info.kind, [(n, v) for n, v in reader.items()])
    if not proposed or proposed.group(1) != answer:
        return f"the reader's values do not give {proposed.group(1) if proposed else 'that'}"
    return None


# --- operators -------------------------------------------------------------------------


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


def misread_value(action: Action, rng: random.Random) -> Action | None:
    """perception.misread_value: a value read off the chart is carried on wrongly."""
    parsed = parse_values(action.content)
    if parsed is None or parsed[0] == HANDOFF_LEAD:
        return None
    lead, values = parsed
    if action.tool == "calculator":
        m = _CALC.search(action.content)
        if not m:
            return None
        a, b = m.group(1), m.group(2)
        new = _replace(values, (i := _pick(values, (a, b), rng)), _misread(values, i, rng))
        return calc_action(action.actor, lead, new, a, b)
    kind = _kind_of(action.content)
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


def _to(action: Action) -> str | None:
    m = re.match(r"^To (\w+):", action.content)
    return m.group(1) if m else None


def distorted_handoff(action: Action, rng: random.Random) -> Action | None:
    """coordination.distorted_handoff: a message passes on one value garbled (the reader's
    report, or the orchestrator's hand-off of the reader's values)."""
    parsed = parse_values(action.content) if action.tool is None else None
    if parsed is None or _kind_of(action.content) is not None:
        return None
    lead, values = parsed
    i = rng.randrange(len(values))
    new = _replace(values, i, _transcribe(values[i][1], rng))
    old, changed = f"{lead} {format_values(values)}.", f"{lead} {format_values(new)}."
    return Action(action.actor, action.content.replace(old, changed, 1))


def wrong_tool_argument(action: Action, rng: random.Random) -> Action | None:
    """action.wrong_tool_argument: the stated difference is right, the expression sent has
    one operand mistyped."""
    if action.tool != "calculator":
        return None
    parsed, m = parse_values(action.content), _CALC.search(action.content)
    if parsed is None or m is None:
        return None
    a, b, va, vb = m.groups()
    if rng.random() < 0.5:
        va = str(_transcribe(int(va), rng))
    else:
        vb = str(_transcribe(int(vb), rng))
    return calc_action(action.actor, parsed[0], parsed[1], a, b, expr=f"({va} - {vb})")


POLICIES: dict[str, type] = {"react": ChartReactSystem, "orchestrator": ChartOrchestratorSystem}
"""System name -> this benchmark's scripted reference policy."""

OPERATORS = {
    "perception.misread_value": misread_value,
    "coordination.distorted_handoff": distorted_handoff,
    "action.wrong_tool_argument": wrong_tool_argument,
}
"""Taxonomy mode -> operator for this benchmark's calculator, final_answer and messages."""

PROMPTS: dict[str, dict[str, str]] = {
    "react": {
        "assistant": "You answer questions about a bar chart image. Use read_chart to measure "
        "the bars, calculator for arithmetic, and final_answer to answer.",
    },
    "orchestrator": {
        "orchestrator": "You coordinate: have the reader read the chart, hand its values and "
        "the question to the analyst, then send the analyst's answer to the verifier.",
        "reader": "You read the bar chart with read_chart and report every bar's value to "
        "the orchestrator.",
        "analyst": "You answer the question from the values you are given, using calculator "
        "for arithmetic, and report your computation and proposed answer.",
        "verifier": "You check the analyst's values and arithmetic against the reader's report; "
        "if they agree call final_answer, otherwise send the work back.",
    },
}
"""System -> agent -> the role prompt an LLM playing that agent would get."""
