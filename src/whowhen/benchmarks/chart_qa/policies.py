"""Scripted reference policies for chart QA, deciding only from the visible history.

react: read_chart, then (for a difference) one calculator call, then the answer.
orchestrator: the orchestrator has the reader read the chart, hands the reader's values
and the question to the analyst, and the analyst's proposal to the verifier; the verifier
checks the analyst's values and arithmetic against the reader's report (it does not look
at the chart again), so a misread in the reader's report propagates, while an analyst's
misread or mistyped value is caught and redone. It checks that the stated computation is
done right, not that it is the one the question asks for: a difference taken the other way
round passes.

The wording of every step is in `actions`, the operators that rewrite it in `operators`.
"""

from __future__ import annotations

from collections.abc import Sequence

from whowhen.agents.scripted import ScriptedOrchestrator, ScriptedReact, addressee, tell
from whowhen.benchmarks.chart_qa.actions import (
    CHART_LEAD,
    DIFF_REPORT,
    EXPR,
    HANDOFF_LEAD,
    PROPOSED,
    REPORTED_LEAD,
    Values,
    answer_action,
    approval_action,
    calc_action,
    conclude,
    diff_answer_action,
    parse_calc,
    parse_values,
)
from whowhen.benchmarks.chart_qa.tasks import TaskInfo, format_values, parse_task
from whowhen.runtime import Action, Step
from whowhen.tools import calculate


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
        return tell("analyst", "orchestrator", _diff_report(calcs[-1], info.pair, results[-1]))

    def verify(self, history: Sequence[Step]) -> Action:
        info = parse_task(history[0].content)
        reports = _messages(history, "analyst", "orchestrator")
        values = _reader_values(history)
        report = reports[-1].content if reports else ""
        proposed = PROPOSED.search(report)
        problem = _check(info, dict(values or []), report) if values else "no chart values"
        if problem or not proposed:
            return tell(
                "verifier",
                "orchestrator",
                f"Check failed: {problem or 'no proposed answer'}. Please redo the analysis.",
            )
        return approval_action(proposed.group(1))


def _diff_report(calc: Step, pair: tuple[str, str], result: Step) -> str:
    """The analyst's report of its difference step: the computation as it stated it (names
    and operation), with the values it actually sent, and the calculator's result."""
    a, b, va, vb = parse_calc(calc.content) or (*pair, "?", "?")
    sent = EXPR.match(str((calc.tool_args or {}).get("expression", "")))
    if sent:
        va, vb = sent.groups()
    return f"{a} {va} minus {b} {vb} is {result.content}. Proposed answer: {result.content}."


def _check(info: TaskInfo, reader: dict[str, int], report: str) -> str | None:
    """What is wrong with the analyst's report against the reader's values (None if fine)."""
    if info.kind == "diff" and info.pair:
        m = DIFF_REPORT.search(report)
        if not m:
            return "the analyst's report does not show the computation"
        a, va, b, vb, result, proposed = m.groups()
        for name, value in ((a, va), (b, vb)):
            if reader.get(name) != int(value):
                return f"the reader reports {name} at {reader.get(name)}, not {value}"
        expr = f"{va} - {vb}"
        if calculate(expr) != result or proposed != result:
            return f"{expr} is {calculate(expr)}, not {proposed}"
        return None
    proposed = PROPOSED.search(report)
    _, answer = conclude(info.kind, [(n, v) for n, v in reader.items()])
    if not proposed or proposed.group(1) != answer:
        return f"the reader's values do not give {proposed.group(1) if proposed else 'that'}"
    return None


POLICIES: dict[str, type] = {"react": ChartReactSystem, "orchestrator": ChartOrchestratorSystem}
"""System name -> this benchmark's scripted reference policy."""
