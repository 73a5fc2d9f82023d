"""Scripted reference policies for chart QA, deciding only from the visible history.

Reading the chart takes several passes (`reading.read_next`): an overview of every bar,
then each bar the question needs measured on its own, in an order the agent states (its
plan: the named pair; every bar from the shortest up for the highest, from the tallest down
for the lowest; every bar in reading order for a trend), and a bar measured again when it
is within a few units of the bar it competes with (a close call). The values the agent
works from are its single-bar measurements; the overview only plans the order.

Every step states the part of the agent's belief it acts on, and later steps
take that belief from the steps, not from the task: the plan says which bars are read;
the check step lists the values the answer is concluded from; the orchestrator restates
the question in each message and every agent answers the question as last stated to it.

react: the reading passes, one calculator step (the difference asked for, or the margin
that decides the answer), then the answer from the values that step lists.
orchestrator: the orchestrator has the reader read the chart, hands the reader's values
and the question to the analyst, and the analyst's proposal to the verifier; the verifier
checks the analyst's values and arithmetic against the reader's report (it does not look
at the chart again), so a misread in the reader's report propagates, while an analyst's
misread or mistyped value is caught and redone. Before approving, the verifier asks for a
second measurement of the two bars the answer turns on when they are close (or, in some
tasks, always): the orchestrator sends the reader back, the reader re-measures and
reports, and the verifier checks again.

Every step's framing is drawn from several wordings (`whowhen.agents.phrasing`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedOrchestrator, ScriptedReact, addressee, tell
from whowhen.benchmarks.chart_qa.actions import (
    CHART_LEAD,
    CHECK,
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
    diff_answer_action,
    parse_calc,
    parse_values,
)
from whowhen.benchmarks.chart_qa.goals import (
    Goal,
    conclude,
    deciding,
    stated_goal,
    task_goal,
)
from whowhen.benchmarks.chart_qa.reading import (
    _REMEASURE,
    CLOSE_GAP,
    _measured,
    _observations,
    _reads,
    last_note,
    measured_values,
    read_next,
)
from whowhen.benchmarks.chart_qa.tasks import TaskInfo, format_values, parse_task
from whowhen.runtime import Action, Step
from whowhen.tools import calculate


def react_closing(history: Sequence[Step], info: TaskInfo, goal: Goal) -> Action:
    """react's step once it says the reading is done: the last bar's note, then the
    calculator step on the bars the answer turns on (an answer at once if there are none)."""
    values = measured_values(history, 0, "assistant", info.categories)
    done = phrasing.phrase(history, "cq.done", DONE)
    pre = " ".join(t for t in (last_note(history, 0, "assistant"), done) if t) + " "
    pair = deciding(goal, values)
    if pair is None:
        return answer_action("assistant", CHART_LEAD, values, goal, pre)
    if goal.kind != "diff":
        pre += phrasing.phrase(history, "cq.check", CHECK)
    return calc_action("assistant", CHART_LEAD, values, *pair, pre=pre)


class ChartReactSystem(ScriptedReact):
    """One agent: the reading passes, a calculator step, the answer."""

    def act(self, history: Sequence[Step]) -> Action:
        info = parse_task(history[0].content)
        goal = task_goal(info)
        calcs = [s for s in history if s.actor == "assistant" and s.tool == "calculator"]
        if not calcs:
            step = read_next("assistant", history, 0, info, goal)
            return step if step is not None else react_closing(history, info, goal)
        results = _observations(history, "calculator")
        result = results[-1].content if results else "?"
        pre = phrasing.phrase(history, "cq.result", RESULT, result=result) + " "
        if goal.kind == "diff" and info.pair is not None:
            return diff_answer_action("assistant", *info.pair, result, pre)
        parsed = parse_values(calcs[-1].content)  # the values the check step stated
        return answer_action("assistant", CHART_LEAD, parsed[1] if parsed else [], goal, pre)


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


def goal_for(history: Sequence[Step], agent: str, info: TaskInfo) -> Goal:
    """The question as last stated to `agent` (by the orchestrator; to the orchestrator,
    by any agent's message), the task's before anyone restated it."""
    if agent == "orchestrator":
        said = [s for s in history if s.kind == "message"]
    else:
        said = _messages(history, "orchestrator", agent)
    return stated_goal(said, task_goal(info))


class ChartOrchestratorSystem(ScriptedOrchestrator):
    """Orchestrator, reader (reads the chart), analyst (computes), verifier (checks)."""

    agents = ("orchestrator", "reader", "analyst", "verifier")

    def orchestrate(self, history: Sequence[Step]) -> Action:
        info = parse_task(history[0].content)
        question = goal_for(history, "orchestrator", info).question
        values = _reader_values(history)

        def say(key: str, variants: Sequence[str], **fields: object) -> str:
            return phrasing.phrase(history, f"cq.orch.{key}", variants, question=question, **fields)

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
            return tell("orchestrator", "analyst", lead + say("handoff", HANDOFF))
        return tell("orchestrator", "verifier", say("check", TO_VERIFIER))

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        asked = _messages(history, "orchestrator", worker)
        start = asked[-1].step if asked else 0
        if worker == "reader":
            return self._read(history, start)
        return self._analyse(history, start)

    def _read(self, history: Sequence[Step], start: int) -> Action:
        info = parse_task(history[0].content)
        goal = goal_for(history, "reader", info)
        order = _REMEASURE.search(history[start].content) if start else None
        only = order.groups() if order else ()
        step = read_next("reader", history, start, info, goal, only)
        return step if step is not None else reader_report(history, start, info, only)

    def _analyse(self, history: Sequence[Step], start: int) -> Action:
        info = parse_task(history[0].content)
        goal = goal_for(history, "analyst", info)
        parsed = parse_values(history[start].content) if start else None
        if parsed is None:
            return tell(
                "analyst", "orchestrator", "I did not get the chart values. Please send them."
            )
        values = parsed[1]
        if goal.kind != "diff" or goal.pair is None:
            sentence, answer = conclude(goal, values)
            return tell(
                "analyst",
                "orchestrator",
                f"Question: {goal.question} {REPORTED_LEAD} {format_values(values)}. {sentence} "
                f"Proposed answer: {answer}.",
            )
        missing = [name for name in goal.pair if name not in dict(values)]
        if missing:
            return tell("analyst", "orchestrator", f"The values I got do not include {missing[0]}.")
        calcs = [s for s in history[start:] if s.actor == "analyst" and s.tool == "calculator"]
        results = _observations(history, "calculator", start)
        first = not _messages(history, "analyst", "orchestrator")
        if first and phrasing.task_chance(history, "cq.analyst.estimate", 0.35):
            return tell("analyst", "orchestrator", _estimate(values, goal))
        if not calcs or not results:
            return calc_action("analyst", REPORTED_LEAD, values, *goal.pair)
        return tell("analyst", "orchestrator", _diff_report(calcs[-1], goal, results[-1]))

    def verify(self, history: Sequence[Step]) -> Action:
        info = parse_task(history[0].content)
        goal = goal_for(history, "verifier", info)
        reports = _messages(history, "analyst", "orchestrator")
        values = _reader_values(history)
        report = reports[-1].content if reports else ""
        proposed = PROPOSED.search(report)
        problem = _check(goal, dict(values or []), report) if values else "no chart values"
        if problem or not proposed:
            return tell(
                "verifier",
                "orchestrator",
                f"Check failed: {problem or 'no proposed answer'}. Please redo the analysis.",
            )
        asked = any(
            _REMEASURE.search(s.content) for s in _messages(history, "verifier", "orchestrator")
        )
        pair = deciding(goal, values or [])
        if not asked and pair:
            by = dict(values or [])
            a, b = pair
            close = abs(by[a] - by[b]) <= CLOSE_GAP
            if close or phrasing.task_chance(history, "cq.verify.remeasure", 0.4):
                text = phrasing.phrase(
                    history,
                    "cq.verify",
                    VERIFY_REMEASURE,
                    a=a,
                    b=b,
                    va=by[a],
                    vb=by[b],
                    question=goal.question,
                )
                return tell("verifier", "orchestrator", text)
        return approval_action(proposed.group(1), history)


def reader_report(
    history: Sequence[Step], start: int, info: TaskInfo, only: Sequence[str] = ()
) -> Action:
    """The reader's report once it says the reading is done: its single-bar measurements
    (after a re-measure order, its last report with the new readings put in)."""
    note = last_note(history, start, "reader")
    if not only:
        values = measured_values(history, start, "reader", info.categories)
        pre = phrasing.phrase(history, "cq.report", REPORT)
    else:
        before = dict(_reader_values(history) or [])
        latest = {n: vs[-1] for n, vs in _measured(_reads(history, start, "reader")).items()}
        changed = any(before.get(n) != v for n, v in latest.items())
        values = [(n, latest.get(n, v)) for n, v in before.items()]
        change = ", and one reading changed" if changed else ": no change"
        pre = phrasing.phrase(
            history, "cq.report2", REPORT_AGAIN, a=only[0], b=only[1], change=change
        )
    pre = f"{note} {pre}" if note else pre
    return tell("reader", "orchestrator", f"{pre}{CHART_LEAD} {format_values(values)}.")


def _estimate(values: Values, goal: Goal) -> str:
    """The analyst's first go at a difference in some tasks: worked out in its head from
    the values rounded to tens, which the verifier sends back to be computed exactly."""
    by = dict(values)
    a, b = goal.pair or ("", "")
    guess = round(by[a], -1) - round(by[b], -1)
    return (
        f"Question: {goal.question} {a} {by[a]} minus {b} {by[b]} is about {guess}. "
        f"Proposed answer: {guess}."
    )


def _diff_report(calc: Step, goal: Goal, result: Step) -> str:
    """The analyst's report of its difference step: the question, the computation as it
    stated it (names and operation), with the values it actually sent, and the result."""
    a, b, va, vb = parse_calc(calc.content) or (*(goal.pair or ("?", "?")), "?", "?")
    sent = EXPR.match(str((calc.tool_args or {}).get("expression", "")))
    if sent:
        va, vb = sent.groups()
    r = result.content
    return f"Question: {goal.question} {a} {va} minus {b} {vb} is {r}. Proposed answer: {r}."


def _check(goal: Goal, reader: dict[str, int], report: str) -> str | None:
    """What is wrong with the analyst's report against the reader's values and the question
    as last stated to the verifier (None if fine). For a difference it checks the values
    and the arithmetic, not which way round the difference is taken."""
    if goal.kind == "diff" and goal.pair:
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
    _, answer = conclude(goal, list(reader.items()))
    if not proposed or proposed.group(1) != answer:
        return f"the reader's values do not give {proposed.group(1) if proposed else 'that'}"
    return None


POLICIES: dict[str, type] = {"react": ChartReactSystem, "orchestrator": ChartOrchestratorSystem}
"""System name -> this benchmark's scripted reference policy."""
