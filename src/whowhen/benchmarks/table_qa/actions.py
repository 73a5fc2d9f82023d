"""Builders and readers of the table-QA steps that policies, operators and tests share (the
aggregate step, a proposal, an answer, an approval), on top of `forms`, and what the
visible history shows (a query's output, the last proposal, the last send-back).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.benchmarks.table_qa.forms import build, read
from whowhen.benchmarks.table_qa.phrases import _AGG_OF_SQL, WORKER_TEXTS
from whowhen.runtime import Action, Step

REJECTION = re.compile(r"^Check failed: ")


def sql_action(
    actor: str,
    agg: str,
    measure: str,
    product: str,
    region: str,
    month: int | str,
    style: int = 0,
) -> Action:
    """The aggregate step in wording `style`: the stated target and the query for it."""
    fields = {"agg": agg, "measure": measure, "product": product, "region": region}
    return build("agg", style, actor, month=month, **fields)


def parse_sql_step(action: Action | Step) -> tuple[str, str, str, str, int] | None:
    """The stated (agg, measure, product, region, month) of an aggregate step."""
    reading = read(action)
    if reading is None or reading.kind != "agg":
        return None
    f = reading.fields
    return f["agg"], f["measure"], f["product"], f["region"], int(f["month"])


def query_aggregate(query: str) -> str | None:
    """The aggregate a query computes, as the question words it."""
    m = re.search(r"\b(SUM|AVG|MAX|MIN)\s*\(", query, re.I)
    return _AGG_OF_SQL.get(m.group(1).upper()) if m else None


def query_target(query: str) -> tuple[str, str, str, int] | None:
    """(measure, product, region, month) a query aggregates and filters on, as written."""
    m = re.search(
        r"\((\w+)\).* product = '(\w+)' AND region = '(\w+)' AND month = (\d+)", query, re.I
    )
    return (m.group(1), m.group(2), m.group(3), int(m.group(4))) if m else None


def proposal_action(
    answer: str, agg: str, n: str, style: int, product: str = "", region: str = ""
) -> Action:
    """The solver's proposal in wording `style` (0 omits the row count and names the
    product and region the query was for)."""
    fields = {"value": answer, "agg": agg, "n": n, "product": product, "region": region}
    return build("proposal", style, "solver", **fields)


def parse_proposal(text: str) -> tuple[str, str, str, int] | None:
    """(answer, agg, row count, wording) of a proposal, or None."""
    reading = read(Action("solver", text))
    if reading is None or reading.kind != "proposal":
        return None
    f = reading.fields
    return f["value"], f.get("agg", ""), f.get("n", ""), reading.index


def answer_action(actor: str, answer: str, history: Sequence[Step]) -> Action:
    """The single agent's answer, worded by the draw at this step."""
    index = phrasing.choose(history, "table.answer", range(len(WORKER_TEXTS["answer"])))
    return build("answer", index, actor, value=answer)


def approve(answer: str, history: Sequence[Step] = ()) -> Action:
    """The verifier's approval of `answer`, worded by the draw at this step."""
    return build(
        "approve", phrasing.choose(history, "table.approve", range(3)), "verifier", value=answer
    )


NO_ROWS = "none"
"""What an agent reads off a query that returned no value (no row, or a NULL)."""


def value_of(observation: str) -> str:
    """The first cell of a query's output (what a one-value query returned); `NO_ROWS`
    when there is none, one word, so that a note can state it like any value."""
    lines = observation.strip().splitlines()
    if len(lines) < 2:
        return observation.strip() or NO_ROWS
    cell = lines[1].split(",")[0].strip()
    return NO_ROWS if not cell or cell.startswith("(") else cell


def output(history: Sequence[Step], step: Step) -> str:
    """The observation that answered `step` ('' if none)."""
    for i, s in enumerate(history):
        if s.step == step.step and i + 1 < len(history) and history[i + 1].kind == "observation":
            return history[i + 1].content
    return ""


def last_proposal(history: Sequence[Step]) -> tuple[str, str, str, int] | None:
    """The solver's latest proposal, read."""
    for s in reversed(history):
        if s.actor == "solver" and s.tool is None:
            return parse_proposal(s.content)
    return None


def restart(history: Sequence[Step]) -> int:
    """Index of the verifier's last send-back (0 if none): the solver redoes from there."""
    for i in range(len(history) - 1, 0, -1):
        s = history[i]
        if s.actor == "verifier" and s.tool is None and REJECTION.match(s.content):
            return i
    return 0
