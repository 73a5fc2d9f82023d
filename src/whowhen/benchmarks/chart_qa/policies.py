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

The wording of every step is in `actions`, the operators that rewrite it in `operators`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedOrchestrator, ScriptedReact, addressee, tell
from whowhen.benchmarks.chart_qa.actions import (
    AXIS,
    BAR_NOTE,
    CHART_LEAD,
    CLOSE,
    DIFF_REPORT,
    DONE,
    EXPR,
    FIRST_BAR,
    HANDOFF_LEAD,
    LEFT,
    NEXT_BAR,
    OVERVIEW,
    PROPOSED,
    REPORTED_LEAD,
    SAME,
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


RESULT = (
    "The calculator gives {result}.",
    "That subtraction comes to {result}.",
    "{result} is what the calculator returns.",
)
ORDER_READ = (
    "Please read the bar values off the chart with read_chart and report them.",
    "Reader, please measure the chart: the axis, then the bars, and report every value.",
    "First we need the data. Please read the chart and send me the bar values.",
)
HANDOFF = (
    "Please answer: {question}",
    "Using these values, please answer: {question}",
    "Work from these values only and answer: {question}",
)
TO_VERIFIER = (
    "The analyst has proposed an answer. Please check it against the reader's values.",
    "We have a proposal from the analyst; please check it against the reader's values.",
    "Please check the analyst's proposal against the reader's values before we finish.",
)
ORDER_REMEASURE = (
    "The verifier asks for a second look: please measure {a} and {b} again and report.",
    "Please measure {a} and {b} again; the verifier wants to be sure of them.",
    "One more pass for the verifier: measure {a} and {b} again and send the values.",
)
TO_VERIFIER_AGAIN = (
    "The reader has measured {a} and {b} again. Please check the proposal once more.",
    "Second measurement done for {a} and {b}. Please check the analyst's answer again.",
    "The reader re-measured {a} and {b}; over to you for the final check.",
)
VERIFY_REMEASURE = (
    "Before I approve: {a} ({va}) and {b} ({vb}) decide the answer; please have the reader "
    "measure {a} and {b} again.",
    "{a} and {b} are what the answer turns on ({va} against {vb}). To be safe, please have "
    "the reader measure {a} and {b} again.",
    "The proposal looks right, but it hinges on {a} ({va}) and {b} ({vb}); please have the "
    "reader measure {a} and {b} again before I sign off.",
)
REPORT = (
    "All bars I was asked for are measured. ",
    "Here are my readings, with the single-bar measurements put in. ",
    "Done reading. ",
)
REPORT_AGAIN = (
    "I measured {a} and {b} again{change}. ",
    "Second measurement of {a} and {b} done{change}. ",
    "Re-measured {a} and {b}{change}. ",
)
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
