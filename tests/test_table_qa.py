from __future__ import annotations

import random
from collections.abc import Sequence

import polars as pl
import pytest

from whowhen.assembly import make_system
from whowhen.benchmarks.table_qa.actions import (
    parse_proposal,
    parse_sql_step,
    query_aggregate,
    sql_action,
)
from whowhen.benchmarks.table_qa.env import TableQAEnv
from whowhen.benchmarks.table_qa.forms import read
from whowhen.benchmarks.table_qa.operators import OPERATORS as TABLE_OPERATORS
from whowhen.benchmarks.table_qa.operators import misread
from whowhen.benchmarks.table_qa.tasks import (
    AGGREGATES,
    Task,
    generate_tasks,
    gold_answer,
    make_table,
    parse_question,
    query_for,
)
from whowhen.operators import OPERATORS
from whowhen.runtime import Action, Step, run_episode, warm_start

from .conftest import MAX_STEPS
from .operator_checks import valid_for_env

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


def test_agent_sql_is_contained(tmp_path) -> None:
    """No files through SQL, a runaway query stopped at its time limit, a huge result cut
    to 20 rows; the episode goes on after each."""
    from whowhen.benchmarks.table_qa.env import run_sql
    from whowhen.benchmarks.table_qa.tasks import make_table

    secret = tmp_path / "secret.csv"
    secret.write_text("a\n42\n")
    env = TableQAEnv(TASKS[0])
    env.reset()

    def sql(query: str) -> str:
        return env.step(Action("a", "", "sql", {"query": query}))[1]

    assert "disabled by configuration" in sql(f"SELECT * FROM read_csv('{secret}')")
    assert "disabled by configuration" in sql(
        "WITH t AS (SELECT 1) SELECT * FROM read_parquet('/etc/passwd')"
    )
    table = make_table(TASKS[0].seed)
    out = run_sql(table, "SELECT count(*) FROM range(100000000000)", time_limit_s=0.5)
    assert out == "Error: the query ran past its time limit (0.5 s) and was stopped"
    assert sql("SELECT * FROM range(10000000)").endswith("(more than 20 rows)")
    assert sql("SELECT SUM(units) AS s FROM sales").startswith("s\n")  # still usable


def test_episodes_do_not_see_each_other() -> None:
    a, b = TableQAEnv(TASKS[0]), TableQAEnv(TASKS[1])
    a.reset()
    b.reset()
    q = {"query": "SELECT SUM(units) AS s FROM sales"}
    sums = [env.step(Action("x", "", "sql", q))[1] for env in (a, b)]
    assert sums[0] == f"s\n{make_table(TASKS[0].seed)['units'].sum()}\n(1 row)"
    assert sums[1] == f"s\n{make_table(TASKS[1].seed)['units'].sum()}\n(1 row)"


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
        episode = run_episode(TableQAEnv(task), make_system(system, "table_qa"), MAX_STEPS)
        assert episode.verdict.success, task.question


def test_operators_on_queries() -> None:
    action = sql_action("assistant", "total", "revenue", "desks", "North", 3)
    rng = random.Random(0)
    operand = OPERATORS["reasoning.wrong_operand"](action, rng)
    assert parse_sql_step(operand)[4] in (2, 4)
    operator = OPERATORS["reasoning.wrong_operator"](action, rng)
    assert parse_sql_step(operator)[0] == "average"
    assert query_aggregate(operator.tool_args["query"]) == "average"
    arg = OPERATORS["action.wrong_tool_argument"](action, rng)
    s = parse_sql_step(arg)  # another region or product, stated and queried alike
    assert s[:2] == ("total", "revenue") and s[4] == 3
    assert (s[2] != "desks") + (s[3] != "North") == 1
    assert f"'{s[2]}'" in arg.tool_args["query"] and f"'{s[3]}'" in arg.tool_args["query"]
    assert set(AGGREGATES) == {"total", "average", "largest", "smallest"}
    # the verifier checks the aggregate against the question: no swap in the solver's steps
    solver = sql_action("solver", "total", "revenue", "desks", "North", 3)
    assert TABLE_OPERATORS["reasoning.wrong_operator"](solver, rng) is None


def _count_ask(step: Step) -> bool:
    reading = read(step)
    return reading is not None and reading.kind == "reject.count"


def test_verifier_catches_a_wrong_aggregate_but_not_a_wrong_plan() -> None:
    task = next(t for t in TASKS if t.agg == "total")
    system = make_system("solver_verifier", "table_qa")
    original = run_episode(TableQAEnv(task), system, MAX_STEPS)
    at = next(s.step for s in original.history if parse_sql_step(s))  # the aggregate step
    query = original.history[at].as_action()
    # a swapped aggregate (a slip: no operator makes it in the solver's steps) is caught
    stated = parse_sql_step(query)
    slipped = sql_action("solver", "average", *stated[1:], style=read(query).index)
    caught = warm_start(TableQAEnv(task), system, original.history, at, slipped, MAX_STEPS)
    assert caught.episode.verdict.success  # sent back and redone: a recovery
    assert any(
        s.actor == "verifier" and s.content.startswith("Check failed")
        for s in caught.episode.history
    )
    # another month, measure or region, stated and queried, matches the stated plan: it gets
    # through
    for mode in ("reasoning.wrong_operand", "planning.wrong_subgoal", "action.wrong_tool_argument"):
        slipped = OPERATORS[mode](query, random.Random(1), original.history[:at])
        missed = warm_start(TableQAEnv(task), system, original.history, at, slipped, MAX_STEPS)
        assert missed.fidelity.exact
        assert not any(  # only a request for the row count, as in a run without the slip
            "Check failed" in s.content and not _count_ask(s) for s in missed.episode.history[at:]
        )
        if missed.episode.verdict.final_answer != task.answer:
            assert not missed.episode.verdict.success


MARKERS = ("inject", "error", "wrong", "mistake", "slip", "oops")
FOREIGN = (
    Action(
        "assistant",
        "Next, add 4 to the running total of 50.",
        "calculator",
        {"expression": "50 + 4"},
    ),
    Action("solver", "I have applied all 3 operations. Proposed answer: 54."),
    Action("verifier", "Check failed at calculation 2: the problem asks to add 4. Please redo."),
    Action(
        "assistant", "All operations are done; the answer is 54.", "final_answer", {"answer": "54"}
    ),
    Action("coder", "I will implement f.", "write_code", {"code": "def f():\n    return 1\n"}),
)


def _sound(replaced: Action | None, original: Action, system: str) -> Action:
    assert replaced is not None and replaced != original and replaced.actor == original.actor
    assert valid_for_env(replaced, "table_qa", system)
    text = f"{replaced.content} {replaced.tool_args}".lower()
    assert not any(word in text for word in MARKERS)
    return replaced


def _fails(task: Task, system: str, history: Sequence[Step], step: int, action: Action) -> bool:
    result = warm_start(
        TableQAEnv(task), make_system(system, "table_qa"), history, step, action, MAX_STEPS
    )
    assert result.fidelity.exact
    return not result.episode.verdict.success


@pytest.mark.parametrize("mode", ["planning.wrong_subgoal", "perception.misread_value"])
def test_react_operators(mode: str) -> None:
    task = TASKS[0]
    episode = run_episode(TableQAEnv(task), make_system("react", "table_qa"), MAX_STEPS)
    tool = "sql" if mode == "planning.wrong_subgoal" else "final_answer"
    step = next(
        s for s in episode.history if s.tool == tool and (tool != "sql" or parse_sql_step(s))
    )
    op = OPERATORS[mode]
    replaced = _sound(
        op(step.as_action(), random.Random(0), episode.history[: step.step]),
        step.as_action(),
        "react",
    )
    if tool == "sql":
        stated = parse_sql_step(replaced)
        assert stated[1] != task.measure and stated[0] == task.agg
        assert f"({stated[1]})" in replaced.tool_args["query"]
    else:
        assert replaced.tool_args["answer"] != task.answer
        assert replaced.tool_args["answer"] in replaced.content
    assert _fails(task, "react", episode.history, step.step, replaced)
    own = TABLE_OPERATORS[mode]  # the registry's operator also tries other benchmarks' ones
    for foreign in FOREIGN:
        assert own(foreign, random.Random(0), episode.history[: step.step]) is None


def test_misread_swaps_digits_or_confuses_a_lookalike() -> None:
    for value in ("260", "13", "12.5", "7", "1000", "44"):
        for seed in range(10):
            out = misread(value, random.Random(seed))
            assert out != value and float(out) > 0 and len(out) == len(value)
    assert misread("13", random.Random(0)) in {"31", "73", "18"}


def test_solver_verifier_hand_off_and_approval() -> None:
    system = make_system("solver_verifier", "table_qa")
    handoff = OPERATORS["coordination.distorted_handoff"]
    checked = 0
    for task in TASKS:
        episode = run_episode(TableQAEnv(task), system, MAX_STEPS)
        history = episode.history
        # the last proposal, approved at once (no re-run of the query before the approval)
        proposal = [s for s in history if "Proposed answer" in s.content][-1]
        if history[proposal.step + 1].tool != "final_answer":
            continue
        replaced = _sound(
            handoff(proposal.as_action(), random.Random(0), history[: proposal.step]),
            proposal.as_action(),
            "solver_verifier",
        )
        before, after = parse_proposal(proposal.content), parse_proposal(replaced.content)
        assert after is not None and after[1:] == before[1:] and after[0] != before[0]
        assert _fails(task, "solver_verifier", history, proposal.step, replaced)
        checked += 1
        if checked == 3:
            break
    assert checked == 3


def test_false_approval_of_a_real_send_back_fails_the_task() -> None:
    """A first aggregate that forgot the month is sent back: approving it instead fails the
    task; approving a proposal sent back only for its row count is no error (no operator)."""
    system = make_system("solver_verifier", "table_qa")
    approve = OPERATORS["verification.false_approval"]
    kinds: set[str] = set()
    flipped = 0
    for task in TASKS:
        episode = run_episode(TableQAEnv(task), system, MAX_STEPS)
        for step in episode.history:
            reading = read(step)
            if reading is None or not reading.kind.startswith("reject."):
                continue
            replaced = approve(step.as_action(), random.Random(0), episode.history[: step.step])
            kinds.add(reading.kind)
            if reading.kind == "reject.count":
                assert replaced is None
                continue
            approval = _sound(replaced, step.as_action(), "solver_verifier")
            assert approval.tool == "final_answer"
            assert approval.tool_args["answer"] in approval.content
            if approval.tool_args["answer"] != task.answer:  # not all months' value alike
                assert _fails(task, "solver_verifier", episode.history, step.step, approval)
                flipped += 1
    assert kinds == {"reject.count", "reject.month"} and flipped
    for foreign in FOREIGN:
        for mode in ("coordination.distorted_handoff", "verification.false_approval"):
            assert TABLE_OPERATORS[mode](foreign, random.Random(0), episode.history[:1]) is None


def test_a_query_that_allocates_gigabytes_is_bounded() -> None:
    """`repeat` builds one 2 GB string before DuckDB looks at its interrupt or its memory
    cap: it ran 14 s and took the process to 2 GB. In the sandboxed worker it ends within
    the time limit, and this process's memory does not move."""
    import resource
    import time

    from whowhen.benchmarks.table_qa.env import SQL_TIME_LIMIT_S, run_sql
    from whowhen.benchmarks.table_qa.tasks import make_table

    table = make_table(TASKS[0].seed)
    run_sql(table, "SELECT 1 AS one")  # the worker is up
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    out = run_sql(table, "SELECT length(repeat('x', 2000000000)) AS n")
    assert out.startswith("Error:") and time.monotonic() - start < SQL_TIME_LIMIT_S + 2
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024 < 50
    assert run_sql(table, "SELECT SUM(units) AS s FROM sales").startswith("s\n")


def test_sql_worker_keeps_a_bounded_number_of_tables() -> None:
    """The worker holds at most MAX_TABLES task tables (least recently used dropped, sent
    again when needed): held in DuckDB's memory, about 375 tables outgrew its address
    space and queries answered with an out-of-memory error, recorded as observations; in
    the worker's file they take its disk, which is bounded too."""
    from whowhen.benchmarks.table_qa.env import SqlSandbox
    from whowhen.benchmarks.table_qa.tasks import make_table

    box = SqlSandbox()
    box.MAX_TABLES = 3
    query = "SELECT COUNT(*) AS n FROM sales"
    for seed in range(7):
        assert box.query(make_table(500 + seed), query, 5, 5.0)["rows"] == [["360"]]
    tables = box.query(make_table(506), "SELECT count(*) AS n FROM duckdb_tables()", 5, 5.0)
    assert tables["rows"] == [["3"]]
    assert box.query(make_table(500), query, 5, 5.0)["rows"] == [["360"]]  # sent again
