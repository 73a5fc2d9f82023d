"""The table_qa SQL sandbox under attack: the tables every episode of a process shares
cannot be changed by any SQL an agent sends, a query that exhausts memory is reported as
such and the worker goes on, and a worker that cannot start is an infrastructure failure,
never an agent's observation.

Each attack is sent as an agent would send it; then a fresh episode of the same task asks
plain questions and must see exactly what it saw before the attack."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from whowhen.benchmarks.table_qa import env as table_env
from whowhen.benchmarks.table_qa.env import SQL_MEMORY, TableQAEnv, run_sql, sql_sandbox
from whowhen.benchmarks.table_qa.tasks import generate_tasks, make_table
from whowhen.errors import InfraError
from whowhen.runtime import Action
from whowhen.sandbox import Limits

TASK = generate_tasks(3, seed=41)[0]
PLAIN = (
    "SELECT COUNT(*) AS n, SUM(units) AS u, SUM(revenue) AS r FROM sales",
    "SELECT region, product, month, units FROM sales "
    "ORDER BY units, revenue, region, product, month",
    "SELECT * FROM sales",
    "SELECT SUM(revenue) AS total FROM sales WHERE product = 'lamps' AND region = 'North'",
)
"""What an episode asks of its table: its size, an ordered listing (default order, nulls
order and collation show), the first rows as stored, a filtered aggregate."""


def _episode() -> Callable[[str], str]:
    env = TableQAEnv(TASK)
    env.reset()
    return lambda query: env.step(Action("assistant", "", "sql", {"query": query}))[1]


def _expected() -> list[str]:
    """The plain answers, computed from the rows with Polars (not through the sandbox)."""
    table = make_table(TASK.seed)
    lamps = table.filter((pl.col("product") == "lamps") & (pl.col("region") == "North"))
    first = [",".join(str(v) for v in row) for row in table.head(20).rows()]
    ordered = table.sort(["units", "revenue", "region", "product", "month"])
    listing = [f"{r},{p},{m},{u}" for r, p, m, u, _ in ordered.head(20).rows()]
    return [
        f"n,u,r\n{table.height},{table['units'].sum()},{table['revenue'].sum()}\n(1 row)",
        "\n".join(["region,product,month,units", *listing, "... (more than 20 rows)"]),
        "\n".join([",".join(table.columns), *first, "... (more than 20 rows)"]),
        f"total\n{lamps['revenue'].sum()}\n(1 row)",
    ]


def _name() -> str:
    """The shared table's name in the worker, as an agent finds it (duckdb_tables())."""
    return f"t_{sql_sandbox()._key(make_table(TASK.seed))}"


def test_plain_queries_see_the_rows() -> None:
    sql = _episode()
    assert [sql(q) for q in PLAIN] == _expected()


THROUGH_THE_TOOL = [
    'WITH x AS (SELECT 1) DELETE FROM "{t}"',
    'WITH x AS (SELECT 1) UPDATE "{t}" SET units = 0',
    'WITH x AS (SELECT 1) INSERT INTO "{t}" SELECT * FROM "{t}"',
]
"""Statements that pass a keyword check for SELECT/WITH and write."""

PAST_ANY_KEYWORD_RULE = [
    'DROP TABLE "{t}"',
    'ALTER TABLE "{t}" RENAME TO stolen',
    'UPDATE "{t}" SET revenue = 0',
    'DELETE FROM "{t}"; SELECT 1',
    'BEGIN TRANSACTION; DELETE FROM "{t}"',
    'COPY "{t}" TO \'/tmp/t.csv\'; DELETE FROM "{t}"; COPY "{t}" FROM \'/tmp/t.csv\'',
    'CREATE OR REPLACE VIEW sales AS SELECT * FROM "{t}" WHERE units < 0',
    'CREATE OR REPLACE TEMP VIEW sales AS SELECT * FROM "{t}" LIMIT 1',
    'CREATE TEMP TABLE "{t}" AS SELECT * FROM "{t}" LIMIT 1',
    "CREATE TEMP MACRO sum(x) AS 0",
    "CREATE MACRO sum(x) AS 0",
    "SET default_order = 'DESC'",
    "SET GLOBAL default_null_order = 'nulls_first'",
    "PRAGMA default_collation = 'nocase'",
    "SET memory_limit = '1MB'",
    "SET lock_configuration = false; SET memory_limit = '1MB'",
    "SET search_path = 'nowhere'",
    "CALL enable_profiling()",
    "ATTACH ':memory:' AS m; USE m; CREATE TABLE \"{t}\" AS SELECT 1 AS x",
    "ATTACH ':memory:' AS m; USE m; DETACH memory",
    "CHECKPOINT; VACUUM",
]
"""Sent past the tool's keyword rule, as an agent would if that rule were the only guard."""


def _detach_and_reattach(name: str) -> str:
    """The attack on a read-only attached database: a second alias of its file, detach
    the original, attach the file again writable, delete."""
    where = sql_sandbox().query(
        make_table(TASK.seed),
        "SELECT database_name, path FROM duckdb_databases() WHERE NOT internal",
        20,
        5.0,
    )
    files = [(db, path) for db, path in where.get("rows", []) if path]
    db, path = files[0] if files else ("memory", ":memory:")
    return (
        f"ATTACH '{path}' AS m2; USE m2; DETACH \"{db}\"; "
        f"ATTACH '{path}' AS w (READ_WRITE); DELETE FROM w.\"{name}\""
    )


@pytest.mark.parametrize("attack", THROUGH_THE_TOOL)
def test_a_writing_statement_through_the_tool_changes_nothing(attack: str) -> None:
    sql = _episode()
    sql(attack.format(t=_name()))
    assert [_episode()(q) for q in PLAIN] == _expected()


@pytest.mark.parametrize("attack", PAST_ANY_KEYWORD_RULE)
def test_no_statement_changes_what_the_next_episode_sees(attack: str) -> None:
    """The guarantee is the storage's (read-only) and the session's (one per query), not a
    keyword check: each attack goes straight to the sandbox."""
    _episode()("SELECT 1")  # the table is in the worker
    sql_sandbox().query(make_table(TASK.seed), attack.format(t=_name()), 20, 5.0)
    assert [_episode()(q) for q in PLAIN] == _expected()


def test_reattaching_the_data_file_writable_changes_nothing() -> None:
    _episode()("SELECT 1")
    attack = _detach_and_reattach(_name())
    sql_sandbox().query(make_table(TASK.seed), attack, 20, 5.0)
    assert [_episode()(q) for q in PLAIN] == _expected()


def test_an_attack_on_one_table_leaves_the_other_tables_alone() -> None:
    other = generate_tasks(3, seed=41)[1]
    before = run_sql(make_table(other.seed), PLAIN[0])
    _episode()("SELECT 1")
    name = f"t_{sql_sandbox()._key(make_table(other.seed))}"
    sql_sandbox().query(make_table(TASK.seed), f'DELETE FROM "{name}"', 20, 5.0)
    assert run_sql(make_table(other.seed), PLAIN[0]) == before


MEMORY = f"Error: the query ran past its memory limit ({SQL_MEMORY}) and was stopped"
EXHAUST = (
    "SELECT length(string_agg(a.region || b.product || c.product, ',')) AS n "
    "FROM sales a, sales b, sales c",
    "SELECT list(x) FROM range(20000000) r(x)",
    "SELECT list(x) FROM range(8000000) r(x)",
)
"""A cross join aggregated into one string and a list past DuckDB's own cap, and a list
that fits DuckDB but not the worker's address space once it is turned into Python values
(before, a query like these could leave the worker unable to start the thread that timed
the next query: the plain query after it was told it ran past its time limit)."""


def test_a_query_that_exhausts_memory_says_so_and_the_next_query_answers() -> None:
    sql = _episode()
    plain = _expected()[0]
    for _ in range(2):
        for query in EXHAUST:
            assert sql(query) == MEMORY, query
            assert sql(PLAIN[0]) == plain, query


def test_a_table_the_worker_lost_is_an_infra_error_not_an_observation() -> None:
    """The parent believes the table is there and the worker has none: that is the
    tool's fault, not something the agent's query did."""
    table = make_table(TASK.seed)
    _episode()("SELECT 1")
    sql_sandbox().worker.ask({"drop": sql_sandbox()._key(table)}, 10.0)
    with pytest.raises(InfraError, match="SQL worker failed to run a query: Catalog Error"):
        run_sql(table, PLAIN[0])
    sql_sandbox().worker.close()  # the next query starts a fresh worker and sends the table
    assert run_sql(table, PLAIN[0]) == _expected()[0]


# --- the worker itself: timed out, died, died at its memory limit, did not start ---

TOY = """
import json, os, sys, time
for line in sys.stdin:
    req = json.loads(line)
    if "sleep" in req:
        time.sleep(req["sleep"])
    if "exit" in req:
        sys.stderr.write(req["exit"] + "\\n")
        sys.stderr.flush()
        os._exit(3)
    if "eat" in req:
        held = []
        while True:
            held.append(b"x" * 65536)
    print(json.dumps({"ok": req}), flush=True)
"""


def _toy(tmp_path: Path, body: str = TOY, memory_mb: int = 256):
    from whowhen.sandbox.worker import Worker

    script = tmp_path / "toy.py"
    script.write_text(textwrap.dedent(body))
    return Worker(str(script), [], Limits(wall_s=10, memory_mb=memory_mb))


def test_the_worker_tells_a_timeout_from_a_death_from_its_memory_limit(tmp_path) -> None:
    from whowhen.sandbox.worker import WorkerFailed

    worker = _toy(tmp_path)
    try:
        assert worker.ask({"n": 1}, 10.0) == {"ok": {"n": 1}}
        with pytest.raises(WorkerFailed) as late:
            worker.ask({"sleep": 5}, 0.5)
        assert late.value.kind == "timeout"
        assert worker.ask({"n": 2}, 10.0) == {"ok": {"n": 2}}  # a fresh one
        with pytest.raises(WorkerFailed) as died:
            worker.ask({"exit": "the toy gave up"}, 10.0)
        assert worker.ask({"n": 3}, 10.0) == {"ok": {"n": 3}}
        assert died.value.kind == "died" and "the toy gave up" in str(died.value)
        with pytest.raises(WorkerFailed) as full:
            worker.ask({"eat": 1}, 10.0)
        assert full.value.kind == "memory_limit", str(full.value)
    finally:
        worker.close()


def test_a_worker_that_dies_before_its_first_answer_did_not_start(tmp_path) -> None:
    from whowhen.sandbox.worker import WorkerFailed

    worker = _toy(tmp_path, "raise SystemExit('no such engine here')\n")
    try:
        with pytest.raises(WorkerFailed) as failed:
            worker.ask({"n": 1}, 10.0)
        assert failed.value.kind == "start"
        assert "no such engine here" in str(failed.value)
    finally:
        worker.close()


def test_a_sql_worker_without_duckdb_is_an_infra_error_not_an_observation(tmp_path) -> None:
    box = table_env.SqlSandbox(site=str(tmp_path))  # a site dir that holds no duckdb
    try:
        with pytest.raises(InfraError, match=r"SQL worker did not start.*No module named 'duckdb'"):
            box.query(make_table(TASK.seed), "SELECT 1", 20, 5.0)
    finally:
        box.worker.close()


def test_preflight_starts_the_worker_or_names_the_cause(monkeypatch, tmp_path) -> None:
    table_env.preflight()  # the real one works
    real = table_env._duckdb_files
    monkeypatch.setattr(table_env, "_duckdb_files", lambda: (str(tmp_path), real()[1]))
    table_env.sql_sandbox.cache_clear()
    try:
        with pytest.raises(InfraError, match=r"No module named 'duckdb'") as failed:
            table_env.preflight()
        assert "\n" not in str(failed.value)
    finally:
        table_env.sql_sandbox().worker.close()
        table_env.sql_sandbox.cache_clear()
    monkeypatch.undo()
    table_env.preflight()
