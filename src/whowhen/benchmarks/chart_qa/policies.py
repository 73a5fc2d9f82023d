"""Scripted reference policies for chart QA, deciding only from the visible history.

Reading the chart takes several passes (`read_next`): the axis scale, an overview of every
bar, then each bar the question needs measured on its own (every bar for the highest,
lowest or trend; the named pair for a difference), and a bar measured again when it is
within a few units of the bar it competes with (a close call). The values used are the
overview's, with each single-bar measurement replacing the overview's reading.

react: the reading passes, then (for a difference) one calculator call, then the answer.
orchestrator: the orchestrator has the reader read the chart, hands the reader's values
and the question to the analyst, and the analyst's proposal to the verifier; the verifier
checks the analyst's values and arithmetic against the reader's report (it does not look
at the chart again), so a misread in the reader's report propagates, while an analyst's
misread or mistyped value is caught and redone. It checks that the stated computation is
done right, not that it is the one the question asks for: a difference taken the other way
round passes. Before approving, the verifier asks for a second measurement of the two bars
the answer turns on when they are close (or, in some tasks, always): the orchestrator sends
the reader back, the reader re-measures and reports, and the verifier checks again.

Every step's framing is drawn from several wordings (`whowhen.agents.phrasing`).

The wording of every step is in `actions`, the reading passes in `reading`, the operators
that rewrite a step in `operators`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedOrchestrator, ScriptedReact, addressee, tell
from whowhen.benchmarks.chart_qa.actions import (
    CHART_LEAD,
    DIFF_REPORT,
    DONE,
    EXPR,
    HANDOFF,
    HANDOFF_LEAD,
    ORDER_READ,
    ORDER_REMEASURE,
    PROPOSED,
    REPORT,
    REPORT_AGAIN,
    REPORTED_LEAD,
    RESULT,
    TO_VERIFIER,
    TO_VERIFIER_AGAIN,
    VERIFY_REMEASURE,
    Values,
    answer_action,
    approval_action,
    calc_action,
    conclude,
    diff_answer_action,
    parse_calc,
    parse_values,
)
from whowhen.benchmarks.chart_qa.reading import (
    _REMEASURE,
    CLOSE_GAP,
    _chart_values,
    _measured,
    _observations,
    _reads,
    read_next,
)
from whowhen.benchmarks.chart_qa.tasks import TaskInfo, format_values, parse_task
from whowhen.runtime import Action, Step
from whowhen.tools import calculate


class ChartReactSystem(ScriptedReact):
    """One agent: the reading passes, a calculator call for a difference, the answer."""

    def act(self, history: Sequence[Step]) -> Action:
        info = parse_task(history[0].content)
        step = read_next("assistant", history, 0, info)
        if step is not None:
            return step
        values = _chart_values(history, 0, "assistant") or []
        pre = phrasing.phrase(history, "cq.done", DONE) + " "
        if info.kind != "diff" or info.pair is None:
            return answer_action("assistant", CHART_LEAD, values, info.kind, pre)
        results = _observations(history, "calculator")
        if not results:
            return calc_action("assistant", CHART_LEAD, values, *info.pair, pre=pre)
        pre = phrasing.phrase(history, "cq.result", RESULT, result=results[-1].content) + " "
        return diff_answer_action("assistant", *info.pair, results[-1].content, pre)


_REJECTION = re.compile(r"^To orchestrator: Check failed: ")


def _messages(history: Sequence[Step], sender: str, to: str, start: int = 0) -> list[Step]:
    return [
        s
        for s in history[start:]
        if s.kind == "message" and s.actor == sender and addressee(s) == to
    ]


def _since(history: Sequence[Step]) -> int:
    """Index of the verifier's last rejection, 0 before it rejected anything."""
    return max(
        (
            s.step
            for s in _messages(history, "verifier", "orchestrator")
            if _REJECTION.match(s.content)
        ),
        default=0,
    )


def _reader_values(history: Sequence[Step]) -> Values | None:
    reports = _messages(history, "reader", "orchestrator")
    parsed = parse_values(reports[-1].content) if reports else None
    return parsed[1] if parsed else None


def _deciding(info: TaskInfo, values: Values) -> tuple[str, str] | None:
    """The two bars the answer turns on: the highest (lowest) and runner-up, the named
    pair, or the closest neighbours of a trend."""
    if len(values) < 2:
        return None
    if info.kind == "diff" and info.pair:
        return info.pair
    if info.kind in ("max", "min"):
        ranked = sorted(values, key=lambda v: v[1], reverse=info.kind == "max")
        return ranked[0][0], ranked[1][0]
    a, b = min(itertools.pairwise(values), key=lambda p: abs(p[0][1] - p[1][1]))
    return a[0], b[0]


class ChartOrchestratorSystem(ScriptedOrchestrator):
    """Orchestrator, reader (reads the chart), analyst (computes), verifier (checks)."""

    agents = ("orchestrator", "reader", "analyst", "verifier")

    def orchestrate(self, history: Sequence[Step]) -> Action:
        info = parse_task(history[0].content)
        values = _reader_values(history)

        def say(key: str, variants: Sequence[str], **fields: object) -> str:
            return phrasing.phrase(history, f"cq.orch.{key}", variants, **fields)

        if values is None:
            return tell("orchestrator", "reader", say("read", ORDER_READ))
        verdicts = _messages(history, "verifier", "orchestrator")
        ask = _REMEASURE.search(verdicts[-1].content) if verdicts else None
        if ask and not _REJECTION.match(verdicts[-1].content):
            a, b = ask.groups()
            after = verdicts[-1].step
            if not _messages(history, "reader", "orchestrator", after + 1):
                return tell("orchestrator", "reader", say("again", ORDER_REMEASURE, a=a, b=b))
            return tell("orchestrator", "verifier", say("check2", TO_VERIFIER_AGAIN, a=a, b=b))
        if not _messages(history, "analyst", "orchestrator", _since(history) + 1):
            lead = f"{HANDOFF_LEAD} {format_values(values)}. "
            return tell(
                "orchestrator", "analyst", lead + say("handoff", HANDOFF, question=info.question)
            )
        return tell("orchestrator", "verifier", say("check", TO_VERIFIER))

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        asked = _messages(history, "orchestrator", worker)
        start = asked[-1].step if asked else 0
        if worker == "reader":
            return self._read(history, start)
        return self._analyse(history, start)

    def _read(self, history: Sequence[Step], start: int) -> Action:
        info = parse_task(history[0].content)
        order = _REMEASURE.search(history[start].content) if start else None
        only = order.groups() if order else ()
        step = read_next("reader", history, start, info, only)
        if step is not None:
            return step
        if not only:
            values = _chart_values(history, start, "reader") or []
            pre = phrasing.phrase(history, "cq.report", REPORT)
        else:
            values = dict(_reader_values(history) or [])
            latest = {n: vs[-1] for n, vs in _measured(_reads(history, start, "reader")).items()}
            changed = any(values.get(n) != v for n, v in latest.items())
            values = [(n, latest.get(n, v)) for n, v in values.items()]
            change = ", and one reading changed" if changed else ": no change"
            pre = phrasing.phrase(
                history, "cq.report2", REPORT_AGAIN, a=only[0], b=only[1], change=change
            )
        return tell("reader", "orchestrator", f"{pre}{CHART_LEAD} {format_values(values)}.")

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
        asked = any(
            _REMEASURE.search(s.content) for s in _messages(history, "verifier", "orchestrator")
        )
        deciding = _deciding(info, values or [])
        if not asked and deciding:
            by = dict(values or [])
            a, b = deciding
            close = abs(by[a] - by[b]) <= CLOSE_GAP
            if close or phrasing.task_chance(history, "cq.verify.remeasure", 0.4):
                text = phrasing.phrase(
                    history, "cq.verify", VERIFY_REMEASURE, a=a, b=b, va=by[a], vb=by[b]
                )
                return tell("verifier", "orchestrator", text)
        return approval_action(proposed.group(1), history)


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
