from __future__ import annotations

import random

import polars as pl
import pytest

from whowhen.agents import make_system
from whowhen.agents.table_qa import parse_sql_step, query_aggregate, sql_action
from whowhen.benchmarks.table_qa import (
    AGGREGATES,
    TableQAEnv,
    generate_tasks,
    gold_answer,
    make_table,
    parse_question,
    query_for,
)
from whowhen.injection import OPERATORS
from whowhen.runtime import Action, run_episode

TASKS = generate_tasks(30, seed=9)


def test_tasks_are_seeded_and_answerable() -> None:
    assert generate_tasks(30, seed=9) == TASKS and generate_tasks(30, seed=10) != TASKS
    for task in TASKS:
        assert parse_question(task.question) == (
            task.agg,
            task.measure,
            task.product,
            task.region,
            task.month,
        )


def test_reference_query_agrees_with_polars_gold() -> None:
    # two independent computations of every answer: DuckDB SQL and Polars
    for task in TASKS:
        env = TableQAEnv(task)
        env.reset()
        obs = env.step(
            Action(
                "a",
                "",
                "sql",
                {"query": query_for(task.agg, task.measure, task.product, task.region, task.month)},
            )
        )
        assert obs is not None and obs[1].splitlines()[1] == task.answer


def test_evaluator_right_and_wrong() -> None:
    task = TASKS[0]
    env = TableQAEnv(task)
    env.reset()
    env.step(Action("a", "", "final_answer", {"answer": f"The answer is {task.answer}"}))
    assert env.evaluate().success
    env.reset()
    env.step(Action("a", "", "final_answer", {"answer": str(float(task.answer) + 1)}))
    assert not env.evaluate().success


def test_sql_errors_are_observations() -> None:
    env = TableQAEnv(TASKS[0])
    env.reset()
    assert env.step(Action("a", "", "sql", {"query": "SELECT nope FROM sales"}))[1].startswith(
        "Error:"
    )
    big = env.step(Action("a", "", "sql", {"query": "SELECT * FROM sales"}))[1]
    assert big.endswith("(more than 20 rows)")
    for query in ("DROP VIEW sales", "CREATE TABLE t AS SELECT 1", "SELECT 1; DELETE FROM x"):
        out = env.step(Action("a", "", "sql", {"query": query}))[1]
        assert out == "Error: only a single SELECT query is allowed"


def test_episodes_do_not_see_each_other() -> None:
    a, b = TableQAEnv(TASKS[0]), TableQAEnv(TASKS[1])
    a.reset()
    b.reset()
    q = {"query": "SELECT SUM(units) AS s FROM sales"}
    sums = [env.step(Action("x", "", "sql", q))[1] for env in (a, b)]
    assert sums[0] == f"s\n{make_table(TASKS[0].seed)['units'].sum()}"
    assert sums[1] == f"s\n{make_table(TASKS[1].seed)['units'].sum()}"


def test_gold_answer_by_hand() -> None:
    table = make_table(1)
    row = table.row(0, named=True)
    rows = table.filter(
        (pl.col("product") == row["product"])
        & (pl.col("region") == row["region"])
        & (pl.col("month") == row["month"])
    )
    assert gold_answer(table, "total", "units", row["product"], row["region"], row["month"]) == (
        str(rows["units"].sum())
    )
    assert gold_answer(table, "total", "units", "lamps", "Nowhere", 1) is None


@pytest.mark.parametrize("system", ["react", "solver_verifier"])
def test_reference_policies_solve_every_task(system: str) -> None:
    for task in TASKS:
        episode = run_episode(TableQAEnv(task), make_system(system, "table_qa"), 40)
        assert episode.verdict.success, task.question


def test_operators_on_queries() -> None:
    action = sql_action("solver", "total", "revenue", "desks", "North", 3)
    rng = random.Random(0)
    operand = OPERATORS["reasoning.wrong_operand"](action, rng)
    assert parse_sql_step(operand)[4] in (2, 4)
    operator = OPERATORS["reasoning.wrong_operator"](action, rng)
    assert parse_sql_step(operator)[0] == "average"
    assert query_aggregate(operator.tool_args["query"]) == "average"
    arg = OPERATORS["action.wrong_tool_argument"](action, rng)
    assert arg.content == action.content and "'North'" not in arg.tool_args["query"]
    assert set(AGGREGATES) == {"total", "average", "largest", "smallest"}


def test_verifier_catches_a_wrong_aggregate_but_not_a_wrong_filter() -> None:
    from whowhen.runtime import warm_start

    task = next(t for t in TASKS if t.agg == "total")
    system = make_system("solver_verifier", "table_qa")
    original = run_episode(TableQAEnv(task), system, 40)
    swapped = OPERATORS["reasoning.wrong_operator"](
        original.history[1].as_action(), random.Random(1)
    )
    caught = warm_start(TableQAEnv(task), system, original.history, 1, swapped, 40)
    assert caught.episode.verdict.success  # the verifier sent the solver back: a recovery
    assert any(
        s.actor == "verifier" and "Check failed" in s.content for s in caught.episode.history
    )
    wrong = OPERATORS["action.wrong_tool_argument"](
        original.history[1].as_action(), random.Random(1)
    )
    missed = warm_start(TableQAEnv(task), system, original.history, 1, wrong, 40)
    assert missed.fidelity.exact
    # another region's value is (almost always) different: then the run fails
    if missed.episode.verdict.final_answer != task.answer:
        assert not missed.episode.verdict.success
