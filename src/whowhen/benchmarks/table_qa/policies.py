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

import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedReact, ScriptedSolverVerifier
from whowhen.benchmarks.table_qa.tasks import AGGREGATES, parse_question, query_for
from whowhen.runtime import Action, Step

_INTENTS = (
    "I will compute the {agg} {measure} of {product} in the {region} region for month "
    "{month} with one query.",
    "Now the aggregate itself: the {agg} {measure} of {product} in the {region} region for "
    "month {month}.",
    "With the rows in view, I query the {agg} {measure} of {product} in the {region} region "
    "for month {month}.",
)
"""The wordings of the aggregate step (an operator keeps the step's wording)."""


def _intent_pattern(template: str) -> re.Pattern[str]:
    out = re.escape(template)
    for name, group in (
        ("agg", r"(\w+)"),
        ("measure", r"(\w+)"),
        ("product", r"(\w+)"),
        ("region", r"(\w+)"),
        ("month", r"(\d+)"),
    ):
        out = out.replace(f"\\{{{name}\\}}", group)
    return re.compile(f"^{out}$")


_INTENT_RES = tuple(_intent_pattern(t) for t in _INTENTS)
_AGG_OF_SQL = {v: k for k, v in AGGREGATES.items()}

_PROPOSALS = (
    "The query returned the value. Proposed answer: {answer}.",
    "The {agg} over {n} matching rows is {answer}, and the cross-check agrees. "
    "Proposed answer: {answer}.",
    "Both queries give {answer} ({n} rows matched). Proposed answer: {answer}.",
)
_PROPOSAL = _PROPOSALS[0]
_PROPOSAL_RE = re.compile(r"^The query returned the value\. Proposed answer: (\S+?)\.$")
_PROPOSED = re.compile(r"Proposed answer: (\S+?)\.$")
_APPROVALS = (
    "The query's aggregate matches the question. Final answer: {answer}.",
    "Aggregate, filters and value all check out. Final answer: {answer}.",
    "I see no problem with the query or the number. Final answer: {answer}.",
)
_ANSWERS = (
    "The aggregate query and the cross-check agree, so the answer is {answer}.",
    "Both ways of computing it give the same number; the answer is {answer}.",
    "That settles it: the answer is {answer}.",
)
_REJECTION_RE = re.compile(r"^Check failed: ")


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


# --- the exploration queries ------------------------------------------------------------

_WHERE = "WHERE product = '{product}' AND region = '{region}' AND month = {month}"
_QUERIES = {
    "peek": "SELECT * FROM sales LIMIT {k}",
    "overview": "SELECT region, COUNT(*) AS n_rows, SUM({measure}) AS {measure} FROM sales "
    "WHERE product = '{product}' GROUP BY region ORDER BY region",
    "months": "SELECT month, COUNT(*) AS n_rows FROM sales WHERE product = '{product}' AND "
    "region = '{region}' GROUP BY month ORDER BY month",
    "typo": "SELECT COUNT(*) AS n FROM sales WHERE product_name = '{product}'",
    "count": "SELECT COUNT(*) AS n FROM sales " + _WHERE,
    "rows": "SELECT units, revenue FROM sales " + _WHERE + " ORDER BY units DESC",
}
_CROSS = {
    "total": "SELECT ROUND(AVG({measure}) * COUNT(*), 2) AS value FROM sales " + _WHERE,
    "average": "SELECT ROUND(SUM({measure}) / COUNT(*), 2) AS value FROM sales " + _WHERE,
    "largest": "SELECT {measure} AS value FROM sales " + _WHERE + " ORDER BY {measure} DESC "
    "LIMIT 1",
    "smallest": "SELECT {measure} AS value FROM sales " + _WHERE + " ORDER BY {measure} ASC "
    "LIMIT 1",
}
_TEXTS = {
    "peek": (
        "Let me look at a few rows of the table first.",
        "Before writing the real query I want to see what the rows look like.",
        "First a quick look at the data: the first {k} rows.",
    ),
    "overview": (
        "Broad view first: how {product} sell by region, in {measure}.",
        "How many rows and how many {measure} does each region have for {product}?",
        "To get my bearings, {product} per region with row counts and {measure}.",
    ),
    "months": (
        "Within {region}, which months have {product} rows at all?",
        "Narrowing down: {product} in {region}, broken down by month.",
        "Let me see the months available for {product} in {region}.",
    ),
    "typo": (
        "Counting the {product} rows.",
        "How many rows are about {product}?",
        "A quick count of {product} rows.",
    ),
    "count": (
        "How many rows match {product}, {region}, month {month}?",
        "Counting the rows for {product} in {region} in month {month}.",
        "Before aggregating: the number of {product} rows in {region} for month {month}.",
    ),
    "rows": (
        "Let me list those rows ({product}, {region}, month {month}).",
        "Here are the matching rows for {product} in {region}, month {month}, sorted.",
        "I want to see the individual {product} rows in {region} for month {month}.",
    ),
}
_CROSS_TEXTS = (
    "Cross-check of that value another way, for {product} in {region}, month {month}: {how}.",
    "To be sure, the same {measure} of {product} in {region} for month {month}, via {how}.",
    "Second route to the number ({product}, {region}, month {month}, {measure}): {how}.",
)
_HOW = {
    "total": "the mean times the row count",
    "average": "the sum divided by the row count",
    "largest": "the top row when sorted in descending order",
    "smallest": "the first row when sorted in ascending order",
}
_NOTES = {
    "plan": (
        "The question names a product, a region and a month. I will look at the data, "
        "narrow it down, and then aggregate.",
        "Plan: check the columns, find the matching rows, aggregate them and cross-check.",
        "I need one number from the sales table; first I make sure I filter the right rows.",
    ),
    "peek": (
        "Columns are region, product, month, units and revenue; one row per sale.",
        "Each row is one sale with its units and revenue, so the question is an aggregate "
        "over several rows.",
        "The rows look clean. Months are numbers, so the filter is month = a number.",
    ),
    "overview": (
        "{region} is in the list, as expected. Now I narrow to month {month}.",
        "The overview covers every region; the one I need is {region}. Next, the month.",
        "That is the broad picture. The question only concerns {region} and month {month}.",
    ),
    "typo": (
        "The column is called product, not product_name. Retrying with the right name.",
        "Wrong column name; the table uses product. Fixing the query.",
        "That failed because product_name does not exist. I use product instead.",
    ),
    "rows": (
        "{n} matching rows, so the aggregate is over {n} values.",
        "There are {n} rows to aggregate; that is what the next query should cover.",
        "With {n} rows matched, I can compute the aggregate now.",
    ),
    "cross": (
        "Both routes give {value}. I am confident in the number.",
        "The cross-check gives {value} as well, so the value stands.",
        "{value} again. The two queries agree.",
    ),
}
_ACKS = (
    "Noted. Go on.",
    "Understood; continue.",
    "Fine by me. Carry on.",
)


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


def _agg_value(history: Sequence[Step], actor: str, since: int = 0) -> str:
    """The value the actor's last aggregate step returned ('' if none)."""
    aggs = [s for s in history[since:] if s.actor == actor and parse_sql_step(s) is not None]
    return _value(_output(history, aggs[-1])) if aggs else ""


def _last_result(history: Sequence[Step]) -> str:
    """The value of the last aggregate step's query in `history` (any agent)."""
    aggs = [s for s in history if parse_sql_step(s) is not None]
    return _value(_output(history, aggs[-1])) if aggs else ""


class TableReactSystem(ScriptedReact):
    """Single agent: plan, look, narrow down, count, aggregate, cross-check, answer."""

    def act(self, history: Sequence[Step]) -> Action:
        return _work(history, "assistant", 0) or answer_action(
            "assistant", _agg_value(history, "assistant"), history
        )


_COUNT_ASKS = (
    "Check failed: the proposal does not say how many rows the value covers. Please "
    "count the matching rows and propose again.",
    "Check failed: I need the number of matching rows with the value. Please recount and resend.",
    "Check failed: a value without its row count is hard to judge. Please count the rows "
    "and propose again.",
)
_AGG_REJECTS = (
    "Check failed: the question asks for the {agg}, but the query computes the {used}. "
    "Please redo the query.",
    "Check failed: the query computes the {used}; the question wants the {agg}. Please "
    "redo the query.",
    "Check failed: wrong aggregate, the {used} instead of the {agg}. Please redo the query.",
)
_TARGET_REJECTS = (
    "Check failed: the query does not compute the {measure} of {product} in the {region} "
    "region for month {month} that you set out to compute. Please redo the query.",
    "Check failed: your text says {measure} of {product}, {region}, month {month}, but "
    "the query filters something else. Please redo the query.",
    "Check failed: query and stated plan ({product}, {region}, month {month}) disagree. "
    "Please redo the query.",
)
_VALUE_REJECTS = (
    "Check failed: the query returns {value}, not the proposed {answer}. Please redo the "
    "query and copy the value.",
    "Check failed: re-running your query gives {value}; the proposal says {answer}. "
    "Please redo the query.",
    "Check failed: {answer} does not match the query's {value}. Please redo the query.",
)
_RERUNS = (
    "I re-run the solver's aggregate query ({product}, {region}, month {month}) to compare "
    "it with the proposal.",
    "Let me execute the same query for {product} in {region}, month {month}, myself before "
    "approving.",
    "Re-running the query on {product}, {region}, month {month} independently.",
)


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
