"""Scripted reference policies for table QA, deciding only from the visible history.

The solver states what it will compute, sends one SQL query, and answers with the value
the query returned, so a wrong filter or aggregate propagates to the answer. In the
two-agent system the verifier checks the query's aggregate against the question's wording
and the query against what the solver said it would compute (a wrong aggregate or a
mistyped filter is caught and redone), but not the plan itself against the question: a
wrong month or measure, stated and queried, gets through.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from whowhen.agents.arithmetic import final_action
from whowhen.agents.scripted import ScriptedReact, ScriptedSolverVerifier, proposed_answer
from whowhen.benchmarks.table_qa import AGGREGATES, MEASURES, parse_question, query_for
from whowhen.runtime import Action, Step

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

# --- operators -----------------------------------------------------------------------------

_LOOKALIKE = {"1": "7", "7": "1", "3": "8", "8": "3", "5": "6", "6": "5", "0": "8"}


def misread(value: str, rng: random.Random) -> str:
    """A value read off wrongly: two adjacent digits swapped (the decimal point stays where
    it is) or a look-alike digit (1/7, 3/8, 5/6, 0/8)."""
    from whowhen.injection.operators import typo

    chars = list(value)
    swaps = [
        i
        for i in range(len(chars) - 1)
        if chars[i].isdigit()
        and chars[i + 1].isdigit()
        and chars[i] != chars[i + 1]
        and not (i == 0 and chars[1] == "0")
    ]
    alike = [
        i for i, c in enumerate(chars) if c in _LOOKALIKE and not (i == 0 and _LOOKALIKE[c] == "0")
    ]
    if swaps and (rng.random() < 0.6 or not alike):
        i = rng.choice(swaps)
        chars[i], chars[i + 1] = chars[i + 1], chars[i]
    elif alike:
        i = rng.choice(alike)
        chars[i] = _LOOKALIKE[chars[i]]
    else:
        return typo(value, rng)
    return "".join(chars)


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _policy_query(action: Action, history: Sequence[Step]) -> tuple[str, str, str, str, int] | None:
    """The stated query of a step in the policy's form that asks what the question asks."""
    parsed = parse_sql_step(action)
    if parsed is None or sql_action(action.actor, *parsed) != action:
        return None
    if history and parse_question(history[0].content) != parsed:
        return None
    return parsed


def wrong_subgoal(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """planning.wrong_subgoal: the query computes the other measure (units instead of
    revenue, or revenue instead of units), stated and queried."""
    parsed = _policy_query(action, history)
    if parsed is None:
        return None
    agg, measure, *rest = parsed
    other = next(m for m in MEASURES if m != measure)
    return sql_action(action.actor, agg, other, *rest)


def misread_value(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """perception.misread_value: the answer transcribes the query's result wrongly."""
    answer = str((action.tool_args or {}).get("answer", ""))
    if action.tool != "final_answer" or not _numeric(answer):
        return None
    if _last_result(history) != answer or final_action(action.actor, answer) != action:
        return None
    return final_action(action.actor, misread(answer, rng))


def distorted_handoff(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """coordination.distorted_handoff: the solver's proposal miscopies the query's value."""
    from whowhen.injection.operators import typo

    m = _PROPOSAL_RE.match(action.content) if action.tool is None else None
    if m is None or action.actor != "solver" or not _numeric(m.group(1)):
        return None
    return Action("solver", _PROPOSAL.format(answer=typo(m.group(1), rng)))


def false_approval(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """verification.false_approval: instead of sending the solver back, the verifier
    answers with the proposal it should have rejected, in its approval wording."""
    if action.actor != "verifier" or action.tool is not None:
        return None
    if not _REJECTION_RE.match(action.content) or not history:
        return None
    answer = proposed_answer(history)
    return _approve(answer) if answer else None


OPERATORS: dict[str, Callable[..., Action | None]] = {
    "planning.wrong_subgoal": wrong_subgoal,
    "perception.misread_value": misread_value,
    "coordination.distorted_handoff": distorted_handoff,
    "verification.false_approval": false_approval,
}
"""Taxonomy mode -> operator for this benchmark's queries, answers and messages (the core
operators in whowhen.injection.operators cover a wrong month, aggregate or filter)."""

PROMPTS: dict[str, dict[str, str]] = {
    "react": {
        "assistant": "You answer a question about a sales table: write one SQL query with sql "
        "(DuckDB, table `sales`), then give the value it returns with final_answer.",
    },
    "solver_verifier": {
        "solver": "You query the sales table with sql and propose the value to the verifier "
        "in a message ('Proposed answer: N.').",
        "verifier": "You check that the solver's query uses the aggregate, product, region and "
        "month the question asks for; answer with final_answer or send the solver back.",
    },
}
"""System -> agent -> the role prompt an LLM playing that agent gets."""
