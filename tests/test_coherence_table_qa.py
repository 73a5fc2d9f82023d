"""Coherent errors for table_qa: an injected step must not contradict itself.

`contradiction` reads ONE step (its text, tool and arguments, nothing of the history) the
way a shortcut attributor could, and says what in it disagrees: the aggregate, measure,
product, region or month the text announces against the SQL actually sent, the answer
stated against the answer sent, a query announced where the tool called is another.
Reference steps never trip it; an operator's replacement must not either, or the gold step
could be found without reading the run. The SQL is read here independently of the
package's own parsers (`parse_sql_step`, `query_target`), so the check does not just echo
the builders.
"""

from __future__ import annotations

import re

import pytest

from whowhen.benchmarks.table_qa import SPEC
from whowhen.benchmarks.table_qa.experts import ExpertChatSystem
from whowhen.operators import build_operators
from whowhen.runtime import Action, Step

from .coherence_checks import modes_test, reference_test, swept_test

BENCHMARK = "table_qa"
TERMINATE = ExpertChatSystem.end.strip()  # a group chat's closing word, after the answer
SYSTEMS = tuple(SPEC.policies)
OPERATORS = build_operators([SPEC], generic={})  # this package's only: no generic slip
_ANNOUNCE = re.compile(r"\bI will (?:compute|query|run)\b", re.I)
_ANSWER_WORDS = re.compile(r"(?:the answer is|final answer:)\s*(\S*?)\.?$", re.I)
_PROPOSED = re.compile(r"Proposed answer: (\S+?)\.$")
_INNER_VALUE = re.compile(r"(?:rows the \w+ is|queries give) (-?\d+(?:\.\d+)?)")
_SQL_AGG = {"SUM": "total", "AVG": "average", "MAX": "largest", "MIN": "smallest"}
_AGG_WORDS = re.compile(r"\b(total|average|largest|smallest)\b", re.I)
_SELECT = re.compile(r"\b(SUM|AVG|MAX|MIN)\s*\(\s*(\w+)\s*\)", re.I)
_PRODUCTS = ("lamps", "chairs", "desks", "shelves", "rugs")
_REGIONS = ("North", "South", "East", "West")
_MEASURES = re.compile(r"\b(units|revenue)\b", re.I)
_MONTH_TEXT = re.compile(r"\bmonth (\d+)", re.I)
_MONTH_SQL = re.compile(r"\bmonth\s*=\s*(\d+)", re.I)


def _same(a: str, b: str) -> bool:
    try:
        return float(a) == float(b)
    except ValueError:
        return a.strip() == b.strip()


def _named(text: str, names: tuple[str, ...]) -> set[str]:
    return {n for n in names if re.search(rf"\b{n}\b", text)}


def _query_contradiction(text: str, sql: str) -> str | None:
    """What the text of a query step says that the SQL does not do (or the reverse)."""
    literals = set(re.findall(r"'(\w+)'", sql))
    for names in (_PRODUCTS, _REGIONS):
        said, filtered = _named(text, names), literals & set(names)
        if said != filtered:
            return f"the text names {sorted(said)}, the query filters {sorted(filtered)}"
    said_months = set(_MONTH_TEXT.findall(text))
    queried_months = set(_MONTH_SQL.findall(sql))
    if said_months != queried_months:
        return f"the text's month {sorted(said_months)}, the query's {sorted(queried_months)}"
    said_measures = {m.lower() for m in _MEASURES.findall(text)}
    if not said_measures <= {m.lower() for m in _MEASURES.findall(sql)}:
        return f"the text's measure {sorted(said_measures)} is not in the query"
    select = _SELECT.search(sql)
    said_agg = {a.lower() for a in _AGG_WORDS.findall(text)}
    if said_agg:
        done = _SQL_AGG[select.group(1).upper()] if select else None
        if said_agg != {done}:
            return f"the text's aggregate {sorted(said_agg)}, the query's {done}"
        if said_measures and select and select.group(2).lower() not in said_measures:
            return f"the text's measure {sorted(said_measures)}, the query's {select.group(2)}"
    return None


def contradiction(step: Action | Step) -> str | None:
    """What in this one step contradicts the rest of it, or None when it is consistent."""
    text, tool, args = step.content.strip(), step.tool, step.tool_args or {}
    text = text.removesuffix(TERMINATE).strip()
    answer = _ANSWER_WORDS.search(text)
    if tool == "sql":
        if not text:
            return "a query with no text"
        return _query_contradiction(text, str(args.get("query", "")))
    if _ANNOUNCE.search(text):
        return f"the text announces a query, the step calls {tool or 'no tool'}"
    if answer is not None or tool == "final_answer":
        if tool != "final_answer":
            return f"the text gives the answer, the step calls {tool or 'no tool'}"
        if answer is None:
            return "an answer sent with a text that states none"
        if not _same(answer.group(1), str(args.get("answer", ""))):
            return f"the text's answer {answer.group(1)}, the call sends {args.get('answer')}"
        return None
    for names in (_PRODUCTS, _REGIONS):  # a message is about one product and one region
        if len(_named(text, names)) > 1:
            return f"the message names {sorted(_named(text, names))}"
    if len(set(_MONTH_TEXT.findall(text))) > 1:
        return f"the message names months {sorted(set(_MONTH_TEXT.findall(text)))}"
    proposed = _PROPOSED.search(text)
    if proposed is not None:
        if tool is not None:
            return f"a proposal that calls {tool}"
        inner = _INNER_VALUE.search(text)
        if inner and not _same(inner.group(1), proposed.group(1)):
            return f"the text's value {inner.group(1)}, the proposal {proposed.group(1)}"
    return None


test_reference_steps_are_consistent = reference_test(BENCHMARK, SYSTEMS, contradiction, 60)
test_operator_replacements_are_consistent = swept_test(BENCHMARK, SYSTEMS, OPERATORS, contradiction)
test_every_mode_of_the_package_was_checked = modes_test(BENCHMARK, SYSTEMS, OPERATORS)


_TEXT = "I will compute the total units of lamps in the North region for month 3 with one query."


def _sql(text: str, query: str, actor: str = "assistant") -> Action:
    return Action(actor, text, "sql", {"query": query})


def _select(agg: str = "SUM", measure: str = "units", region: str = "North", month: int = 3) -> str:
    return (
        f"SELECT ROUND({agg}({measure}), 2) AS value FROM sales "
        f"WHERE product = 'lamps' AND region = '{region}' AND month = {month}"
    )


@pytest.mark.parametrize(
    "step",
    [
        _sql(_TEXT, _select(region="South")),  # the old wrong_tool_argument
        _sql(_TEXT, _select(agg="AVG")),
        _sql(_TEXT, _select(measure="revenue")),
        _sql(_TEXT, _select(month=4)),
        _sql(
            _TEXT,
            "SELECT ROUND(SUM(units), 2) AS value FROM sales WHERE product = 'desks' "
            "AND region = 'North' AND month = 3",
        ),
        Action(
            "assistant",
            "All operations are done; the answer is 24.",
            "final_answer",
            {"answer": "34"},
        ),
        Action(
            "verifier",
            "The query's aggregate matches the question. Final answer: 75.5.",
            "final_answer",
            {"answer": "57.5"},
        ),
        Action("assistant", _TEXT, "final_answer", {"answer": "63"}),
        Action(
            "assistant", "All operations are done; the answer is 63.", "sql", {"query": _select()}
        ),
        Action("solver", _TEXT),
        _sql("Counting the rows for lamps in North in month 3.", _select(month=2)),
        _sql("How many rows match lamps, East, month 3?", _select()),
        _sql(
            "Cross-check of that value another way, for lamps in North, month 3: the mean "
            "times the row count.",
            _select(region="West"),
        ),
        Action("solver", "Both queries give 40 (3 rows matched). Proposed answer: 44."),
        Action(
            "solver",
            "Over 3 matching rows the total is 40, and the cross-check agrees. Proposed "
            "answer: 44.",
        ),
        Action(
            "verifier",
            "Check failed: there is no month filter in the query; the plan was month 4. "
            "Please redo the query for rugs in West, month 5.",
        ),
        Action(
            "verifier",
            "Noted: you want the total units of rugs in West, month 4. Go on.",
            "sql",
            {"query": _select()},
        ),
        Action("solver", "Plan for the total units of rugs in West for month 4, then the East."),
    ],
)
def test_the_check_flags_a_contradictory_step(step: Action) -> None:
    assert contradiction(step) is not None


@pytest.mark.parametrize(
    "step",
    [
        _sql(_TEXT.replace("North", "South"), _select(region="South")),
        _sql(_TEXT.replace("total", "average"), _select(agg="AVG")),
        Action(
            "assistant",
            "All operations are done; the answer is 34.",
            "final_answer",
            {"answer": "34"},
        ),
        Action("solver", "The query returned the value. Proposed answer: 62.5."),
        Action("solver", "Both queries give 40 (3 rows matched). Proposed answer: 40."),
        _sql("Let me look at a few rows of the table first.", "SELECT * FROM sales LIMIT 5"),
        _sql(
            "Now the aggregate itself: the largest revenue of lamps in the North region for "
            "month 3.",
            _select(agg="MAX", measure="revenue"),
        ),
        _sql(
            "To be sure, the same units of lamps in North for month 3, via the sum divided "
            "by the row count.",
            "SELECT ROUND(SUM(units) / COUNT(*), 2) AS value FROM sales WHERE product = "
            "'lamps' AND region = 'North' AND month = 3",
        ),
        Action(
            "verifier",
            "Check failed: the question asks for the total, but the query "
            "computes the average. Please redo the query.",
        ),
    ],
)
def test_the_check_passes_a_consistent_step(step: Action) -> None:
    assert contradiction(step) is None
