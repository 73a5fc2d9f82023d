"""Scripted reference policies for table QA, deciding only from the visible history.

The solver states what it will compute, sends one SQL query, and answers with the value
the query returned, so a wrong filter or aggregate propagates to the answer. In the
two-agent system the verifier checks the query's aggregate against the question's wording
and the query against what the solver said it would compute (a wrong aggregate or a
mistyped filter is caught and redone), but not the plan itself against the question: a
wrong month or measure, stated and queried, gets through.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents.scripted import ScriptedReact, ScriptedSolverVerifier, proposed_answer
from whowhen.benchmarks.table_qa.tasks import AGGREGATES, parse_question, query_for
from whowhen.runtime import Action, Step
from whowhen.tools import final_action

_INTENT = (
    "I will compute the {agg} {measure} of {product} in the {region} region for month "
    "{month} with one query."
)
_INTENT_RE = re.compile(r"compute the (\w+) (\w+) of (\w+) in the (\w+) region for month (\d+)")
_AGG_OF_SQL = {v: k for k, v in AGGREGATES.items()}
_PROPOSAL = "The query returned the value. Proposed answer: {answer}."
_PROPOSAL_RE = re.compile(r"^The query returned the value\. Proposed answer: (\S+?)\.$")
_APPROVAL = "The query's aggregate matches the question. Final answer: {answer}."
_REJECTION_RE = re.compile(r"^Check failed: the (?:question asks for the|query does not) ")


def sql_action(
    actor: str,
    agg: str,
    measure: str,
    product: str,
    region: str,
    month: int,
    query: str | None = None,
) -> Action:
    """A query step: the stated intent, and the query actually sent (they differ only for an
    action error: right intent, wrong argument)."""
    text = _INTENT.format(agg=agg, measure=measure, product=product, region=region, month=month)
    return Action(
        actor, text, "sql", {"query": query or query_for(agg, measure, product, region, month)}
    )


def parse_sql_step(action: Action | Step) -> tuple[str, str, str, str, int] | None:
    """The stated (agg, measure, product, region, month) of a query step."""
    if action.tool != "sql":
        return None
    m = _INTENT_RE.search(action.content)
    if not m:
        return None
    agg, measure, product, region, month = m.groups()
    return agg, measure, product, region, int(month)


def query_aggregate(query: str) -> str | None:
    m = re.search(r"\b(SUM|AVG|MAX|MIN)\s*\(", query, re.I)
    return _AGG_OF_SQL.get(m.group(1).upper()) if m else None


def query_target(query: str) -> tuple[str, str, str, int] | None:
    """(measure, product, region, month) a query aggregates and filters on, as written."""
    m = re.search(
        r"\((\w+)\).* product = '(\w+)' AND region = '(\w+)' AND month = (\d+)", query, re.I
    )
    return (m.group(1), m.group(2), m.group(3), int(m.group(4))) if m else None


def _question(history: Sequence[Step]) -> tuple[str, str, str, str, int]:
    return parse_question(history[0].content)


def _value(observation: str) -> str:
    lines = observation.strip().splitlines()
    return lines[1].split(",")[0].strip() if len(lines) > 1 else observation.strip()


def _solve(actor: str, history: Sequence[Step], since: int) -> Action | None:
    """The query if none was sent since `since`; None once a result is in."""
    queries = [s for s in history[since:] if s.actor == actor and s.tool == "sql"]
    if not queries:
        return sql_action(actor, *_question(history))
    return None


def _last_result(history: Sequence[Step]) -> str:
    obs = [s for s in history if s.kind == "observation" and s.actor == "sql"]
    return _value(obs[-1].content) if obs else ""


class TableReactSystem(ScriptedReact):
    """Single agent: one query, then the answer."""

    def act(self, history: Sequence[Step]) -> Action:
        return _solve("assistant", history, 0) or final_action("assistant", _last_result(history))


class TableSolverVerifierSystem(ScriptedSolverVerifier):
    """Solver queries and proposes; the verifier checks the aggregate against the question."""

    def solver_turn(self, history: Sequence[Step], since: int) -> Action:
        return _solve("solver", history, since) or Action(
            "solver", _PROPOSAL.format(answer=_last_result(history[since:]))
        )

    def verify(self, history: Sequence[Step], since: int) -> Action:
        agg = _question(history)[0]
        queries = [s for s in history[since:] if s.actor == "solver" and s.tool == "sql"]
        query = str((queries[-1].tool_args or {}).get("query", "")) if queries else ""
        used = query_aggregate(query)
        if used != agg:
            return Action(
                "verifier",
                f"Check failed: the question asks for the {agg}, but the "
                f"query computes the {used or 'wrong value'}. Please redo "
                "the query.",
            )
        stated = parse_sql_step(queries[-1])
        if stated is not None and query_target(query) != stated[1:]:
            return Action(
                "verifier",
                f"Check failed: the query does not compute the {stated[1]} of {stated[2]} in "
                f"the {stated[3]} region for month {stated[4]} that you set out to compute. "
                "Please redo the query.",
            )
        return _approve(proposed_answer(history))


def _approve(answer: str) -> Action:
    return Action("verifier", _APPROVAL.format(answer=answer), "final_answer", {"answer": answer})


POLICIES: dict[str, type] = {
    "react": TableReactSystem,
    "solver_verifier": TableSolverVerifierSystem,
}
"""System name -> this benchmark's scripted reference policy."""
