"""Error operators for the table QA steps and messages, one per taxonomy mode.

Every replacement is built with the policy's own builders (`sql_action`, `final_action`,
`_PROPOSAL`, `_approve`) from a wrong belief, so the step says what it does: the
aggregate, measure, product, region and month its text announces are the ones its query
computes, the answer it states is the one it sends. It is wrong only against the question
and the history (tests/test_coherence_table_qa.py holds every operator to that). No
operator was dropped for a contradiction: each mode here has a form in which the wrong
belief is stated and acted on. The verifier's send-backs in successful runs
(a proposal without its row count, a re-run query whose value differs from the proposal)
give `verification.false_approval` rejections to approve, so it is marked `covers` on
solver_verifier again.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from whowhen.benchmarks.base import Operator, covers
from whowhen.benchmarks.table_qa.actions import (
    _approve,
    _last_proposal,
    _last_result,
    answer_action,
    parse_proposal,
    parse_sql_step,
    proposal_action,
    sql_action,
    sql_style,
)
from whowhen.benchmarks.table_qa.phrases import _REJECTION_RE
from whowhen.benchmarks.table_qa.tasks import MEASURES, REGIONS, parse_question
from whowhen.injection.slips import typo
from whowhen.runtime import Action, Step

# --- operators -----------------------------------------------------------------------------

_LOOKALIKE = {"1": "7", "7": "1", "3": "8", "8": "3", "5": "6", "6": "5", "0": "8"}


def misread(value: str, rng: random.Random) -> str:
    """A value read off wrongly: two adjacent digits swapped (the decimal point stays where
    it is) or a look-alike digit (1/7, 3/8, 5/6, 0/8)."""
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
    if parsed is None or sql_action(action.actor, *parsed, style=sql_style(action)) != action:
        return None
    if history and parse_question(history[0].content) != parsed:
        return None
    return parsed


@covers("react")
def wrong_subgoal(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """planning.wrong_subgoal: the query computes the other measure (units instead of
    revenue, or revenue instead of units), stated and queried."""
    parsed = _policy_query(action, history)
    if parsed is None:
        return None
    agg, measure, *rest = parsed
    other = next(m for m in MEASURES if m != measure)
    return sql_action(action.actor, agg, other, *rest, style=sql_style(action))


@covers("react")
def misread_value(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """perception.misread_value: the answer transcribes the query's result wrongly."""
    answer = str((action.tool_args or {}).get("answer", ""))
    if action.tool != "final_answer" or not _numeric(answer):
        return None
    if _last_result(history) != answer or answer_action(action.actor, answer, history) != action:
        return None
    return answer_action(action.actor, misread(answer, rng), history)


@covers("solver_verifier")
def distorted_handoff(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """coordination.distorted_handoff: the solver's proposal miscopies the query's value."""
    m = parse_proposal(action.content) if action.tool is None else None
    if m is None or action.actor != "solver" or not _numeric(m[0]):
        return None
    answer, agg, n, style = m
    return proposal_action(typo(answer, rng), agg, n, style)


@covers("solver_verifier")
def false_approval(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """verification.false_approval: instead of sending the solver back, the verifier
    answers with the solver's last proposal, in its approval wording."""
    if action.actor != "verifier" or action.tool is not None:
        return None
    if not _REJECTION_RE.match(action.content) or not history:
        return None
    proposal = _last_proposal(history)
    return _approve(proposal[0], history) if proposal else None


_SWAP_AGG = {"total": "average", "average": "total", "largest": "smallest", "smallest": "largest"}


@covers("react", "solver_verifier")
def wrong_operand(action: Action, rng: random.Random) -> Action | None:
    """reasoning.wrong_operand: the right aggregate over a neighbouring month, stated and
    queried."""
    table = parse_sql_step(action)
    if table is None:
        return None
    agg, measure, product, region, month = table
    other = rng.choice([m for m in (month - 1, month + 1) if 1 <= m <= 6])
    return sql_action(action.actor, agg, measure, product, region, other, style=sql_style(action))


@covers("react")
def wrong_operator(action: Action, rng: random.Random) -> Action | None:
    """reasoning.wrong_operator: a confused aggregate, stated and queried."""
    table = parse_sql_step(action)
    if table is None:
        return None
    agg, *rest = table
    return sql_action(action.actor, _SWAP_AGG[agg], *rest, style=sql_style(action))


@covers("react", "solver_verifier")
def wrong_tool_argument(action: Action, rng: random.Random) -> Action | None:
    """action.wrong_tool_argument: the right aggregate and measure, filtered on another
    region, the one the step states and queries (the agent copied the region wrongly from
    the question). Not the other region in the query alone: a query that filters another
    region than the text names contradicts itself (and the verifier catches that)."""
    table = parse_sql_step(action)
    if table is None or sql_action(action.actor, *table, style=sql_style(action)) != action:
        return None
    agg, measure, product, region, month = table
    other = rng.choice([r for r in REGIONS if r != region])
    return sql_action(action.actor, agg, measure, product, other, month, style=sql_style(action))


OPERATORS: dict[str, Operator] = {
    "reasoning.wrong_operand": wrong_operand,
    "reasoning.wrong_operator": wrong_operator,
    "action.wrong_tool_argument": wrong_tool_argument,
    "planning.wrong_subgoal": wrong_subgoal,
    "perception.misread_value": misread_value,
    "coordination.distorted_handoff": distorted_handoff,
    "verification.false_approval": false_approval,
}
"""Taxonomy mode -> operator for this benchmark's queries (a wrong month, aggregate or
filter), answers and messages."""
