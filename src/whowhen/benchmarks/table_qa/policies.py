"""Scripted reference policies for table QA, deciding only from the visible history.

The agent works like an analyst (issue 19): it states a plan, looks at a few rows, gets
an overview of the product by region, sometimes breaks the region down by month first
(broad, then refined) or trips over a wrong column name and fixes it, counts and lists
the matching rows, states what it will compute and sends the aggregate query, computes
the same value another way (a cross-check), and answers with the aggregate's value. So a
wrong filter or aggregate in the aggregate step propagates to the answer: the cross-check
repeats the aggregate step's own filters. Every choice is a `phrasing` draw, a pure
function of the task text and the step index.

In the two-agent system the solver's notes go to the verifier, who acknowledges them; on
the proposal the verifier checks the query's aggregate against the question's wording and
the query against what the solver said it would compute (a wrong aggregate or a mistyped
filter is caught and redone), asks for the row count when the proposal omits it (a
send-back in a successful run), and sometimes re-runs the solver's query itself to
compare the value with the proposal. It does not check the plan itself against the
question: a wrong month or measure, stated and queried, gets through.
"""

from __future__ import annotations

from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedReact, ScriptedSolverVerifier
from whowhen.benchmarks.table_qa.actions import (
    _agg_value,
    _approve,
    _last_proposal,
    _output,
    _question,
    _restart,
    _value,
    answer_action,
    parse_proposal,
    parse_sql_step,
    proposal_action,
    query_aggregate,
    query_target,
    sql_action,
)
from whowhen.benchmarks.table_qa.phrases import (
    _ACKS,
    _AGG_REJECTS,
    _COUNT_ASKS,
    _CROSS,
    _CROSS_TEXTS,
    _HOW,
    _INTENTS,
    _NOTES,
    _PROPOSALS,
    _QUERIES,
    _RERUNS,
    _TARGET_REJECTS,
    _TEXTS,
    _VALUE_REJECTS,
)
from whowhen.runtime import Action, Step


def _kind(step: Step) -> str:
    """What a step of the table routine is: a query kind, or a note after one."""
    if step.tool == "final_answer":
        return "answer"
    if step.tool != "sql":
        return "note"
    if parse_sql_step(step) is not None:
        return "agg"
    query = str((step.tool_args or {}).get("query", ""))
    for name, template in _QUERIES.items():
        head = template.split("{")[0]
        if query.startswith(head):
            return name
    return "cross"


def _routine(history: Sequence[Step], actor: str, since: int) -> tuple[str, Step | None, list]:
    """(what the actor did last, that step, its agent steps since `since`)."""
    mine = [s for s in history[since:] if s.actor == actor and s.is_agent_step]
    if not mine:
        return "start", None, mine
    last = mine[-1]
    kind = _kind(last)
    if kind == "note":
        before = _kind(mine[-2]) if len(mine) > 1 else "start"
        return f"note:{before}", last, mine
    return kind, last, mine


def _query_step(history: Sequence[Step], actor: str, kind: str, fields: dict) -> Action:
    query = _QUERIES[kind].format(**fields)
    text = phrasing.phrase(history, f"table.{kind}", _TEXTS[kind], **fields)
    return Action(actor, text, "sql", {"query": query})


def _note(history: Sequence[Step], actor: str, after: str, **fields: object) -> Action:
    return Action(actor, phrasing.phrase(history, f"table.note.{after}", _NOTES[after], **fields))


def _cross(history: Sequence[Step], actor: str, agg_step: Step) -> Action:
    agg, measure, product, region, month = parse_sql_step(agg_step) or _question(history)
    target = query_target(str((agg_step.tool_args or {}).get("query", "")))
    if target is not None:  # the filters the aggregate step ran, so the check repeats them
        measure, product, region, month = target
    agg = query_aggregate(str((agg_step.tool_args or {}).get("query", ""))) or agg
    fields = {"measure": measure, "product": product, "region": region, "month": month}
    query = _CROSS[agg].format(**fields)
    text = phrasing.phrase(history, "table.cross", _CROSS_TEXTS, how=_HOW[agg], **fields)
    return Action(actor, text, "sql", {"query": query})


def _work(history: Sequence[Step], actor: str, since: int, redo: bool = False) -> Action | None:
    """The actor's next step of the routine; None once the cross-check note is made."""
    _, measure, product, region, month = _question(history)
    fields = {
        "k": phrasing.choose(history, "table.k", (5, 6, 8), at=0),
        "measure": measure,
        "product": product,
        "region": region,
        "month": month,
    }
    last, step, mine = _routine(history, actor, since)
    if last == "start":
        if redo:
            return _query_step(history, actor, "count", fields)
        return Action(actor, phrasing.phrase(history, "table.note.plan", _NOTES["plan"]))
    if last == "note:start":
        return _query_step(history, actor, "peek", fields)
    if last == "peek":
        return _note(history, actor, "peek")
    if last == "note:peek":
        return _query_step(history, actor, "overview", fields)
    if last == "overview":
        return _note(history, actor, "overview", **fields)
    if last == "note:overview":
        if phrasing.task_chance(history, "table.months", 0.6):
            return _query_step(history, actor, "months", fields)
        last = "months"
    if last == "months":
        if phrasing.task_chance(history, "table.typo", 0.3):
            return _query_step(history, actor, "typo", fields)
        return _query_step(history, actor, "count", fields)
    if last == "typo":
        return _note(history, actor, "typo")
    if last == "note:typo":
        return _query_step(history, actor, "count", fields)
    if last == "count":
        return _query_step(history, actor, "rows", fields)
    if last == "rows" and phrasing.chance(history, "table.note.rows", 0.6):
        n = _value(_output(history, next(s for s in mine if _kind(s) == "count")))
        return _note(history, actor, "rows", n=n)
    if last in ("rows", "note:rows"):
        style = phrasing.choose(history, "table.intent", range(len(_INTENTS)))
        return sql_action(actor, *_question(history), style=style)
    if last == "agg" and step is not None:
        return _cross(history, actor, step)
    if last == "cross" and step is not None:
        return _note(history, actor, "cross", value=_value(_output(history, step)))
    return None


class TableReactSystem(ScriptedReact):
    """Single agent: plan, look, narrow down, count, aggregate, cross-check, answer."""

    def act(self, history: Sequence[Step]) -> Action:
        return _work(history, "assistant", 0) or answer_action(
            "assistant", _agg_value(history, "assistant"), history
        )


# --- solver + verifier ----------------------------------------------------------------


class TableSolverVerifierSystem(ScriptedSolverVerifier):
    """The solver works through the routine, telling the verifier its notes, and
    proposes; the verifier acknowledges notes, checks the proposal (aggregate, stated
    filters, row count) and sometimes re-runs the query before answering."""

    def decide(self, history: Sequence[Step]) -> Action:
        last = next((s for s in reversed(history) if s.is_agent_step), None)
        if last is not None and last.actor == "verifier" and last.tool == "sql":
            return self._after_rerun(history)
        return super().decide(history)

    def solver_turn(self, history: Sequence[Step], since: int) -> Action:
        since = _restart(history)
        action = _work(history, "solver", since, redo=since > 0)
        if action is not None:
            return action
        counts = [s for s in history[since:] if s.actor == "solver" and _kind(s) == "count"] or [
            s for s in history if s.actor == "solver" and _kind(s) == "count"
        ]
        n = _value(_output(history, counts[-1])) if counts else "0"
        asked = since and history[since].content in _COUNT_ASKS  # then the proposal states it
        choices = (1, 2) if asked else range(len(_PROPOSALS))
        style = phrasing.choose(history, "table.propose", tuple(choices))
        agg = _question(history)[0]
        return proposal_action(_agg_value(history, "solver", since), agg, n, style)

    def verify(self, history: Sequence[Step], since: int) -> Action:
        proposal = parse_proposal(history[-1].content)
        if proposal is None and "Proposed answer: ." in history[-1].content:
            # the query matched nothing: no value to check, and redoing it matches nothing
            # again, so the verifier reports that instead of waiting for a value forever
            text = "The query matches no rows, so there is no value to report."
            return Action("verifier", text, "final_answer", {"answer": "no value"})
        if proposal is None:  # a note along the way
            return Action("verifier", phrasing.phrase(history, "table.ack", _ACKS))
        agg = _question(history)[0]
        restart = _restart(history)
        queries = [s for s in history[restart:] if s.actor == "solver" and parse_sql_step(s)]
        query = str((queries[-1].tool_args or {}).get("query", "")) if queries else ""
        used = query_aggregate(query)
        if used != agg:
            text = phrasing.phrase(
                history, "table.reject", _AGG_REJECTS, agg=agg, used=used or "wrong value"
            )
            return Action("verifier", text)
        stated = parse_sql_step(queries[-1])
        if stated is not None and query_target(query) != stated[1:]:
            _, measure, product, region, month = stated
            text = phrasing.phrase(
                history,
                "table.reject",
                _TARGET_REJECTS,
                measure=measure,
                product=product,
                region=region,
                month=month,
            )
            return Action("verifier", text)
        if not proposal[2]:
            return Action("verifier", phrasing.phrase(history, "table.count", _COUNT_ASKS))
        target = query_target(query)
        if target is not None and phrasing.chance(history, "table.rerun", 0.5):
            _, product, region, month = target
            text = phrasing.phrase(
                history, "table.rerun", _RERUNS, product=product, region=region, month=month
            )
            return Action("verifier", text, "sql", {"query": query})
        return _approve(proposal[0], history)

    def _after_rerun(self, history: Sequence[Step]) -> Action:
        value = _value(history[-1].content) if history[-1].kind == "observation" else ""
        proposal = _last_proposal(history)
        answer = proposal[0] if proposal else ""
        if value and answer and float_or(value) == float_or(answer):
            return _approve(answer, history)
        text = phrasing.phrase(
            history, "table.mismatch", _VALUE_REJECTS, value=value, answer=answer
        )
        return Action("verifier", text)


def float_or(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


POLICIES: dict[str, type] = {
    "react": TableReactSystem,
    "solver_verifier": TableSolverVerifierSystem,
}
"""System name -> this benchmark's scripted reference policy."""
