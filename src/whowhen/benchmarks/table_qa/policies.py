"""Scripted reference policies for table QA, deciding only from the visible history.

The agent works like an analyst: it states a plan that names the target (the
aggregate, measure, product, region and month the question asks for), looks at a few rows
of the product, gets an overview of the product by region, sometimes breaks the region
down by month or trips over a wrong column name and fixes it, counts and lists the
matching rows, states what it will compute and sends the aggregate query, computes the
same value another way (a cross-check), and answers with the value its last note states.
The lone agent thinks aloud after every query (the months it found, the count, the
aggregate's value, a recap before answering); the solver keeps its first look at the rows
to itself.

Every step states part of that working belief, and every later step takes the belief from
the most recent step that stated it (`forms.belief`), never from the question again: the
plan reads the question, the peek and its note carry the product and the measure on, the
overview's note the region and the month, and so on to the aggregate, whose cross-check
repeats its target. So a wrong target or value stated at any step reaches the answer.
When the cross-check disagrees with the aggregate, the agent redoes the aggregate for the
target it last stated (the cross-check's) once, then goes with it.

In the two-agent system the solver's notes go to the verifier, who acknowledges each by
restating it (the solver goes on from the restatement). On a proposal the verifier checks
that the query filters a month, that its aggregate is the question's, that it computes
what the solver said, asks for the row count when the proposal omits it (the solver
counts and proposes the same value again), and sometimes re-runs the solver's query to
compare the value with the proposal. Its send-backs restate the target to redo as the
solver last stated it, not as the question says: it does not check the plan against the
question, so a wrong month, region, product or measure, stated and queried, gets through.
In most tasks that ask for a total or an average, the solver's first aggregate forgets the
month filter and proposes its value at once; the verifier sends it back and the solver
redoes the aggregate (a recovery in every such successful run).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedReact, ScriptedSolverVerifier
from whowhen.benchmarks.table_qa.actions import (
    NO_ROWS,
    answer_action,
    approve,
    last_proposal,
    output,
    parse_proposal,
    proposal_action,
    query_aggregate,
    restart,
    value_of,
)
from whowhen.benchmarks.table_qa.forms import Reading, belief, build, read, target
from whowhen.benchmarks.table_qa.phrases import NO_VALUE, QUERIES, VERIFIER_TEXTS, WORKER_TEXTS
from whowhen.benchmarks.table_qa.tasks import parse_question
from whowhen.runtime import Action, Step

BROAD = 0.8
"""How often a solver's first total or average forgets the month filter (the verifier sends
it back: a recovery in a successful run, and a send-back a false approval can pass)."""
RERUN = 0.3
"""How often the verifier re-runs the solver's query before approving (it catches a
value miscopied after the query, and only then)."""
_AGG_SQL = re.compile(r"^SELECT ROUND\((?:SUM|AVG|MAX|MIN)\(\w+\), 2\) AS value FROM sales")


def _kind(step: Step) -> str:
    """What a step of the routine is (its form's kind; by its shape when it is not one)."""
    reading = read(step)
    if reading is not None:
        return reading.kind
    if step.tool == "final_answer":
        return "answer"
    if step.tool != "sql":
        return "note"
    query = str((step.tool_args or {}).get("query", ""))
    if _AGG_SQL.match(query):
        return "agg" if "month =" in query else "broad"
    for name, template in QUERIES.items():
        if query.startswith(template.split("{")[0]) and name not in ("agg", "broad"):
            return name
    return "cross"


def _say(history: Sequence[Step], actor: str, kind: str, **fields: object) -> Action:
    """A step of `kind` in the wording drawn for this step."""
    key = "table.intent" if kind in ("agg", "broad") else f"table.{kind}"
    index = phrasing.choose(history, key, range(len(WORKER_TEXTS[kind])))
    return build(kind, index, actor, **fields)


def _latest(history: Sequence[Step], actor: str, kinds: tuple[str, ...]) -> Step | None:
    return next(
        (
            s
            for s in reversed(history)
            if s.actor == actor and s.is_agent_step and _kind(s) in kinds
        ),
        None,
    )


def _aggregate(history: Sequence[Step], actor: str, since: int, t: dict) -> Action:
    """The aggregate query; a solver's first one forgets the month in some tasks."""
    forgets = t["agg"] in ("total", "average")  # a month-less max or min may well agree
    if (
        forgets
        and actor == "solver"
        and since == 0
        and phrasing.task_chance(history, "table.broad", BROAD)
    ):
        return _say(history, actor, "broad", **t)
    return _say(history, actor, "agg", **t)


def _after_cross(history: Sequence[Step], actor: str, mine: list[Step], cross: Step) -> Action:
    """The note on the cross-check: agreement, or (once) a disagreement and a redo."""
    value = value_of(output(history, cross))
    agg_step = _latest(mine, actor, ("agg",))
    first = value_of(output(history, agg_step)) if agg_step is not None else value
    redone = any(_kind(s) == "note.disagree" for s in mine)
    if _same(first, value) or redone:
        return _say(history, actor, "note.cross", value=value)
    return _say(history, actor, "note.disagree", first=first, value=value, **target(history))


_NEXT = {
    "plan": "peek",
    "peek": "note.peek",
    "note.peek": "overview",
    "overview": "note.overview",
    "typo": "note.typo",
    "note.typo": "count",
    "count": "rows",
    "note.count": "rows",
    "agg": "cross",
    "note.agg": "cross",
}
"""The step that always follows a kind of step (the rest depend on draws or outputs)."""
_ALOUD = {"months": "note.months", "count": "note.count", "agg": "note.agg", "note.cross": "recap"}
"""Notes only the lone agent makes: it thinks aloud after every query, as no one checks it."""
_UNSAID = {"peek": "overview"}
"""Notes the solver leaves out: its first look at the rows is not worth a message."""


def _next_kind(history: Sequence[Step], actor: str, since: int, last: str) -> str | None:
    """The kind of the actor's next step after `last` (None: time to answer or propose)."""
    if last == "start" and since:  # sent back: a month-less aggregate only needs redoing
        sent_back = read(history[since])
        return "agg" if sent_back is not None and sent_back.kind == "reject.month" else "count"
    if last == "start":
        return "plan"
    fixed = (_ALOUD if actor == "assistant" else _UNSAID).get(last) or _NEXT.get(last)
    if fixed is not None:
        return fixed
    if last in ("note.overview", "months", "note.months"):
        if last == "note.overview" and (
            actor == "assistant" or phrasing.task_chance(history, "table.months", 0.6)
        ):  # the lone agent always narrows by month: no verifier to catch a slip
            return "months"
        return "typo" if phrasing.task_chance(history, "table.typo", 0.3) else "count"
    if last == "rows" and phrasing.chance(history, "table.note.rows", 0.6):
        return "note.rows"
    if last in ("rows", "note.rows", "note.disagree"):
        return "agg"
    return "note.cross" if last == "cross" else None  # or a disagreement: `_after_cross`


def _work(history: Sequence[Step], actor: str, since: int) -> Action | None:
    """The actor's next step of the routine, from `since` (the last send-back, or 0); None
    once its last note is made (or after a solver's month-less aggregate, which it
    proposes at once)."""
    mine = [s for s in history[since:] if s.actor == actor and s.is_agent_step]
    last = _kind(mine[-1]) if mine else "start"
    kind = _next_kind(history, actor, since, last)
    t = target(history)
    if kind is None:
        return None
    if kind == "plan":  # the one step that reads the question
        question = parse_question(history[0].content)
        return _say(history, actor, "plan", **dict(zip(t, question, strict=True)))
    if kind == "note.cross":
        return _after_cross(history, actor, mine, mine[-1])
    if kind == "agg":
        return _aggregate(history, actor, since, t)
    extra: dict[str, object] = {}
    if kind == "peek":
        extra["k"] = phrasing.choose(history, "table.k", (5, 6, 8), at=0)
    elif kind in ("note.count", "note.rows"):
        count = _latest(history, actor, ("count",))
        extra["n"] = value_of(output(history, count)) if count is not None else "0"
    elif kind == "note.agg":
        extra["value"] = value_of(output(history, mine[-1]))
    elif kind == "recap":
        extra["value"] = belief(history).get("value", "")
    return _say(history, actor, kind, **t, **extra)


def _same(a: str, b: str) -> bool:
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b


class TableReactSystem(ScriptedReact):
    """Single agent: plan, look, narrow down, count, aggregate, cross-check, answer."""

    def act(self, history: Sequence[Step]) -> Action:
        return _work(history, "assistant", 0) or answer_action(
            "assistant", belief(history).get("value", ""), history
        )


# --- solver + verifier ----------------------------------------------------------------


class TableSolverVerifierSystem(ScriptedSolverVerifier):
    """The solver works through the routine, telling the verifier its notes, and
    proposes; the verifier acknowledges notes by restating them, checks the proposal
    (month filter, aggregate, stated target, row count) and sometimes re-runs the query
    before answering."""

    def decide(self, history: Sequence[Step]) -> Action:
        last = next((s for s in reversed(history) if s.is_agent_step), None)
        if last is not None and last.actor == "verifier" and last.tool == "sql":
            return self._after_rerun(history)
        return super().decide(history)

    def solver_turn(self, history: Sequence[Step], since: int) -> Action:
        since = restart(history)
        sent_back = read(history[since]) if since else None
        asked = sent_back is not None and sent_back.kind == "reject.count"
        if asked and not any(s.actor == "solver" and s.tool == "sql" for s in history[since:]):
            return _say(history, "solver", "count", **target(history))  # then propose again
        action = None if asked else _work(history, "solver", since)
        if action is not None:
            return action
        query = _latest(history, "solver", ("agg", "broad"))
        count = _latest(history, "solver", ("count",))
        n = value_of(output(history, count)) if count is not None else "0"
        b = belief(history)
        if query is not None and _kind(query) == "broad":  # proposed at once, no cross-check
            value = value_of(output(history, query))
            return proposal_action(value, b["agg"], n, 0, product=b["product"], region=b["region"])
        choices = (1, 2) if asked else (0, 1, 2)  # asked: the proposal states the count
        style = phrasing.choose(history, "table.propose", choices)
        where = {"product": b["product"], "region": b["region"]}
        return proposal_action(b.get("value", ""), b["agg"], n, style, **where)

    def verify(self, history: Sequence[Step], since: int) -> Action:
        proposal = parse_proposal(history[-1].content)
        if proposal is None and "Proposed answer: ." not in history[-1].content:
            return self._ack(history, read(history[-1]))
        if proposal is None or proposal[0] in ("", NO_ROWS):
            # the query matched nothing: no value to check, and redoing it matches nothing
            # again, so the verifier reports that instead of waiting for a value forever
            return Action("verifier", NO_VALUE, "final_answer", {"answer": "no value"})
        index = phrasing.choose(history, "table.reject", range(3))
        t = target(history)
        step = _latest(history, "solver", ("agg", "broad"))  # the query the value is from
        if step is not None and _kind(step) == "broad":
            return build("reject.month", index, "verifier", **t)
        query = str((step.tool_args or {}).get("query", "")) if step is not None else ""
        agg, used = parse_question(history[0].content)[0], query_aggregate(query)
        if used != agg:
            return build("reject.agg", index, "verifier", agg=agg, used=used or "wrong value")
        reading = read(step) if step is not None else None
        if reading is None:  # the query does not compute what the step says it does
            return build("reject.target", index, "verifier", **_said(step, t))
        if not proposal[2]:
            index = phrasing.choose(history, "table.count", range(3))
            return build("reject.count", index, "verifier", **{**t, "value": proposal[0]})
        if phrasing.chance(history, "table.rerun", RERUN):
            return build(
                "rerun",
                phrasing.choose(history, "table.rerun", range(3)),
                "verifier",
                **reading.fields,
            )
        return approve(proposal[0], history)

    def _ack(self, history: Sequence[Step], note: Reading | None) -> Action:
        """An acknowledgement that restates the note (a plain one for anything else)."""
        index = phrasing.choose(history, "table.ack", range(3))
        ack = "ack." + note.kind.removeprefix("note.") if note is not None else ""
        if note is not None and ack in VERIFIER_TEXTS:
            return build(ack, index, "verifier", **note.fields)
        return build("ack", index, "verifier")

    def _after_rerun(self, history: Sequence[Step]) -> Action:
        value = value_of(history[-1].content) if history[-1].kind == "observation" else ""
        proposal = last_proposal(history)
        answer = proposal[0] if proposal else ""
        if value and answer and _same(value, answer):
            return approve(answer, history)
        rerun = _latest(history, "verifier", ("rerun",))
        reading = read(rerun) if rerun is not None else None
        fields = dict(reading.fields) if reading is not None else target(history)
        fields.update(value=value, answer=answer)
        index = phrasing.choose(history, "table.mismatch", range(3))
        return build("reject.value", index, "verifier", **fields)


def _said(step: Step | None, fallback: dict) -> dict:
    """The target an aggregate step's text states (its query may say otherwise)."""
    m = re.search(
        r"the (\w+) (units|revenue) of (\w+) in the (\w+) region(?: for month (\d+))?",
        step.content if step is not None else "",
    )
    if m is None:
        return fallback
    keys = ("agg", "measure", "product", "region", "month")
    return {**fallback, **{k: v for k, v in zip(keys, m.groups(), strict=True) if v}}


POLICIES: dict[str, type] = {
    "react": TableReactSystem,
    "solver_verifier": TableSolverVerifierSystem,
}
"""System name -> this benchmark's scripted reference policy."""
