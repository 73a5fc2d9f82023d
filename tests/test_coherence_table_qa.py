"""Issue 19, "coherent errors", for table_qa: an injected step must not contradict itself.

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

import random
import re
from typing import Any

import polars as pl
import pytest

from whowhen.benchmarks.table_qa import SPEC
from whowhen.injection.operators import build_operators
from whowhen.injection.plan import plan_injections
from whowhen.rollouts import run_rollouts
from whowhen.runtime import Action, Step
from whowhen.runtime.records import steps_from_frame, steps_from_rows
from whowhen.schema import NON_AGENT_ACTORS
from whowhen.taxonomy import Mode

from .operator_checks import TAXONOMY, rollouts

BENCHMARK = "table_qa"
SYSTEMS = tuple(SPEC.policies)
_INTENT = re.compile(
    r"I will compute the (\w+) (\w+) of (\w+) in the (\w+) region for month (\d+)", re.I
)
_ANNOUNCE = re.compile(r"\bI will (?:compute|query|run)\b", re.I)
_ANSWER_WORDS = re.compile(r"(?:the answer is|final answer:)\s*(\S*?)\.?$", re.I)
_SQL_AGG = {"SUM": "total", "AVG": "average", "MAX": "largest", "MIN": "smallest"}
_SELECT = re.compile(r"\b(SUM|AVG|MAX|MIN)\s*\(\s*(\w+)\s*\)", re.I)
_FILTERS = {
    "product": re.compile(r"\bproduct\s*=\s*'(\w+)'", re.I),
    "region": re.compile(r"\bregion\s*=\s*'(\w+)'", re.I),
    "month": re.compile(r"\bmonth\s*=\s*(\d+)", re.I),
}


def _same(a: str, b: str) -> bool:
    try:
        return float(a) == float(b)
    except ValueError:
        return a.strip() == b.strip()


def _query(sql: str) -> dict[str, str] | None:
    """What a query computes: aggregate, measure and each filter's value, or None."""
    select = _SELECT.search(sql)
    if select is None:
        return None
    found = {"agg": _SQL_AGG[select.group(1).upper()], "measure": select.group(2).lower()}
    for name, pattern in _FILTERS.items():
        m = pattern.search(sql)
        if m is None:
            return None
        found[name] = m.group(1)
    return found


def contradiction(step: Action | Step) -> str | None:
    """What in this one step contradicts the rest of it, or None when it is consistent."""
    text, tool, args = step.content, step.tool, step.tool_args or {}
    intent = _INTENT.search(text)
    answer = _ANSWER_WORDS.search(text.strip())
    if intent is not None or _ANNOUNCE.search(text):
        if tool != "sql":
            return f"the text announces a query, the step calls {tool or 'no tool'}"
        query = _query(str(args.get("query", "")))
        if intent is None or query is None:
            return "a query whose text or SQL cannot be read back"
        stated = dict(
            zip(("agg", "measure", "product", "region", "month"), intent.groups(), strict=True)
        )
        for key, value in stated.items():
            if value.lower() != query[key].lower():
                return f"the text's {key} is {value}, the query's is {query[key]}"
        return None
    if answer is not None:
        if tool != "final_answer":
            return f"the text gives the answer, the step calls {tool or 'no tool'}"
        if not _same(answer.group(1), str(args.get("answer", ""))):
            return f"the text's answer {answer.group(1)}, the call sends {args.get('answer')}"
        return None
    if tool == "final_answer":
        return "an answer sent with a text that states none"
    if tool == "sql":
        return "a query with a text that states none"
    return None


def _agent_steps(steps: pl.DataFrame) -> list[Step]:
    agent = steps.filter(
        pl.col("kind").is_in(["action", "message"]) & ~pl.col("actor").is_in(NON_AGENT_ACTORS)
    )
    return steps_from_frame(agent)


OPERATORS = build_operators([SPEC], generic={})
"""This package's operators only (no generic slip, no other benchmark's): mode -> one
operator that tries the mode's operators in order, as the injection stage does."""


def _package_only(
    original: Action, mode: Mode, context: list[dict[str, Any]], rng: random.Random
) -> Action | None:
    return OPERATORS[mode.id](original, rng, steps_from_rows(context))


def planned_replacements(system: str, seed: int = 3, per_run: int = 3) -> list[tuple[str, Action]]:
    """(mode, replacement) of injections planned for every mode of the package on the
    rollouts the coverage test uses (slips on, so recoveries are there to inject into)."""
    runs, steps = rollouts(BENCHMARK, system)
    out = []
    for mode in OPERATORS:
        plan = plan_injections(runs, steps, TAXONOMY, seed, per_run, [mode], _package_only)
        out += [(mode, Action.from_json(a)) for a in plan["replacement_action"]]
    return out


def every_replacement(system: str) -> list[tuple[str, Action]]:
    """(mode, replacement) for every agent step of the rollouts, every mode, three rng
    seeds: more than the plan samples, so no step form is missed."""
    _, steps = rollouts(BENCHMARK, system)
    out = []
    for run_id in steps["run_id"].unique(maintain_order=True):
        history = steps_from_frame(steps.filter(pl.col("run_id") == run_id))
        for i, step in enumerate(history):
            if step.kind not in ("action", "message") or step.actor in NON_AGENT_ACTORS:
                continue
            for mode, op in OPERATORS.items():
                for seed in range(3):
                    replaced = op(step.as_action(), random.Random(seed), history[:i])
                    if replaced is not None and replaced != step.as_action():
                        out.append((mode, replaced))
    return out


@pytest.mark.parametrize("system", SYSTEMS)
def test_reference_steps_are_consistent(system: str) -> None:
    _, steps, _ = run_rollouts(BENCHMARK, system, {"n_tasks": 30}, 1, 0.0, 80)
    agent = _agent_steps(steps)
    assert len(agent) >= 60
    flagged = [(s.content, s.tool_args, why) for s in agent if (why := contradiction(s))]
    assert not flagged, flagged[:3]


@pytest.mark.parametrize("system", SYSTEMS)
def test_operator_replacements_are_consistent(system: str) -> None:
    planned = planned_replacements(system)
    swept = every_replacement(system)
    assert planned and swept
    for name, found in (("planned", planned), ("swept", swept)):
        flagged = [(m, a.content, a.tool_args, why) for m, a in found if (why := contradiction(a))]
        assert not flagged, (name, len(flagged), len(found), flagged[:3])


def test_every_mode_of_the_package_was_checked() -> None:
    modes = {m for system in SYSTEMS for m, _ in every_replacement(system)}
    assert modes == set(OPERATORS)


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
        Action(
            "verifier",
            "Check failed: the question asks for the total, but the query "
            "computes the average. Please redo the query.",
        ),
    ],
)
def test_the_check_passes_a_consistent_step(step: Action) -> None:
    assert contradiction(step) is None
