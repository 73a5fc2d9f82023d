"""The table-QA steps that the policies and the operators both build and read back (the
aggregate step, a proposal, an answer, an approval) and what the visible history says
(the question, a query's value, the last proposal, the last send-back), so that an
operator's replacement is built the way the policy builds its own steps.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.benchmarks.table_qa.phrases import (
    _AGG_OF_SQL,
    _ANSWERS,
    _APPROVALS,
    _INTENT_RES,
    _INTENTS,
    _PROPOSAL_RE,
    _PROPOSALS,
    _REJECTION_RE,
)
from whowhen.benchmarks.table_qa.tasks import parse_question, query_for
from whowhen.runtime import Action, Step


def sql_action(
    actor: str,
    agg: str,
    measure: str,
    product: str,
    region: str,
    month: int,
    query: str | None = None,
    style: int = 0,
) -> Action:
    """The aggregate step: the stated intent (in wording `style`), and the query actually
    sent (they differ only for an action error: right intent, wrong argument)."""
    text = _INTENTS[style % len(_INTENTS)].format(
        agg=agg, measure=measure, product=product, region=region, month=month
    )
    return Action(
        actor, text, "sql", {"query": query or query_for(agg, measure, product, region, month)}
    )


def _parse_intent(text: str) -> tuple[tuple[str, str, str, str, int], int] | None:
    for style, pattern in enumerate(_INTENT_RES):
        m = pattern.match(text)
        if m:
            agg, measure, product, region, month = m.groups()
            return (agg, measure, product, region, int(month)), style
    return None


def parse_sql_step(action: Action | Step) -> tuple[str, str, str, str, int] | None:
    """The stated (agg, measure, product, region, month) of an aggregate step."""
    if action.tool != "sql":
        return None
    parsed = _parse_intent(action.content)
    return parsed[0] if parsed else None


def sql_style(action: Action | Step) -> int:
    """The wording an aggregate step uses (0 when it is not one)."""
    parsed = _parse_intent(action.content)
    return parsed[1] if parsed else 0


def query_aggregate(query: str) -> str | None:
    m = re.search(r"\b(SUM|AVG|MAX|MIN)\s*\(", query, re.I)
    return _AGG_OF_SQL.get(m.group(1).upper()) if m else None


def query_target(query: str) -> tuple[str, str, str, int] | None:
    """(measure, product, region, month) a query aggregates and filters on, as written."""
    m = re.search(
        r"\((\w+)\).* product = '(\w+)' AND region = '(\w+)' AND month = (\d+)", query, re.I
    )
    return (m.group(1), m.group(2), m.group(3), int(m.group(4))) if m else None


def proposal_action(answer: str, agg: str, n: str, style: int) -> Action:
    """The solver's proposal in wording `style` (0 omits the row count)."""
    text = _PROPOSALS[style % len(_PROPOSALS)].format(answer=answer, agg=agg, n=n)
    return Action("solver", text)


def parse_proposal(text: str) -> tuple[str, str, str, int] | None:
    """(answer, agg, row count, wording) of a proposal, or None."""
    if _PROPOSAL_RE.match(text):
        return _PROPOSAL_RE.match(text).group(1), "", "", 0  # type: ignore[union-attr]
    m = re.match(
        r"^The (\w+) over (\d+) matching rows is (\S+), and the cross-check agrees\. "
        r"Proposed answer: (\S+?)\.$",
        text,
    )
    if m and m.group(3) == m.group(4):
        return m.group(4), m.group(1), m.group(2), 1
    m = re.match(
        r"^Both queries give (\S+) \((\d+) rows matched\)\. Proposed answer: (\S+?)\.$", text
    )
    if m and m.group(1) == m.group(3):
        return m.group(3), "", m.group(2), 2
    return None


def answer_action(actor: str, answer: str, history: Sequence[Step]) -> Action:
    """The single agent's answer, worded by the draw at this step."""
    text = phrasing.phrase(history, "table.answer", _ANSWERS, answer=answer)
    return Action(actor, text, "final_answer", {"answer": answer})


def _approve(answer: str, history: Sequence[Step] = ()) -> Action:
    text = phrasing.phrase(history, "table.approve", _APPROVALS, answer=answer)
    return Action("verifier", text, "final_answer", {"answer": answer})


def _question(history: Sequence[Step]) -> tuple[str, str, str, str, int]:
    return parse_question(history[0].content)


def _value(observation: str) -> str:
    lines = observation.strip().splitlines()
    return lines[1].split(",")[0].strip() if len(lines) > 1 else observation.strip()


def _output(history: Sequence[Step], step: Step) -> str:
    for i, s in enumerate(history):
        if s.step == step.step and i + 1 < len(history) and history[i + 1].kind == "observation":
            return history[i + 1].content
    return ""


def _agg_value(history: Sequence[Step], actor: str, since: int = 0) -> str:
    """The value the actor's last aggregate step returned ('' if none)."""
    aggs = [s for s in history[since:] if s.actor == actor and parse_sql_step(s) is not None]
    return _value(_output(history, aggs[-1])) if aggs else ""


def _last_result(history: Sequence[Step]) -> str:
    """The value of the last aggregate step's query in `history` (any agent)."""
    aggs = [s for s in history if parse_sql_step(s) is not None]
    return _value(_output(history, aggs[-1])) if aggs else ""


def _last_proposal(history: Sequence[Step]) -> tuple[str, str, str, int] | None:
    for s in reversed(history):
        if s.actor == "solver" and s.tool is None:
            return parse_proposal(s.content)
    return None


def _restart(history: Sequence[Step]) -> int:
    """Index of the verifier's last send-back (0 if none): the solver redoes from there."""
    for i in range(len(history) - 1, 0, -1):
        s = history[i]
        if s.actor == "verifier" and s.tool is None and _REJECTION_RE.match(s.content):
            return i
    return 0
