"""Table QA (text, data science): a generated sales table, aggregation questions, a SQL tool.

The table is generated from the task seed and held in an in-process DuckDB database;
the agent sees its schema and the distinct values of its text columns in the task text,
and must query it with `sql(query)`. The gold answer is computed with Polars from the
same rows, independently of the SQL path, so a wrong query gives a wrong answer.
"""

from __future__ import annotations

import random
import re
import threading
from dataclasses import dataclass
from functools import lru_cache

import duckdb
import polars as pl

from whowhen.benchmarks.arithmetic import format_number
from whowhen.benchmarks.base import FINAL_ANSWER_TOOL, AnswerEnv, Tool
from whowhen.benchmarks.scoring import numeric
from whowhen.schema import stable_id

BENCHMARK = "table_qa"
MODALITY = "text"
CATEGORY = "data_science"
REGIONS = ("North", "South", "East", "West")
PRODUCTS = ("lamps", "chairs", "desks", "shelves", "rugs")
MEASURES = ("units", "revenue")
AGGREGATES = {"total": "SUM", "average": "AVG", "largest": "MAX", "smallest": "MIN"}
TOOL_SPECS = (
    {
        "name": "sql",
        "description": "Run a DuckDB SQL query on the table `sales` and return the result as CSV.",
        "parameters": {
            "type": "object",
            "required": ["query"],
            "additionalProperties": False,
            "properties": {"query": {"type": "string"}},
        },
    },
    FINAL_ANSWER_TOOL,
)
_QUESTION = "What is the {agg} {measure} of {product} sold in the {region} region in month {month}?"
_PARSE = re.compile(
    r"What is the (\w+) (\w+) of (\w+) sold in the (\w+) region in month "
    r"(\d+)\?"
)


@dataclass(frozen=True)
class Task:
    task_id: str
    question: str
    seed: int
    agg: str
    measure: str
    product: str
    region: str
    month: int
    answer: str


@lru_cache(maxsize=256)
def make_table(seed: int, n_rows: int = 120) -> pl.DataFrame:
    """The task's table; cached because generation and every reset ask for the same one
    (Polars frames are immutable, so sharing is safe)."""
    rng = random.Random(seed)
    rows = [
        {
            "region": rng.choice(REGIONS),
            "product": rng.choice(PRODUCTS),
            "month": rng.randint(1, 6),
            "units": rng.randint(1, 40),
        }
        for _ in range(n_rows)
    ]
    frame = pl.DataFrame(rows)
    prices = {p: 10 + 7 * i for i, p in enumerate(PRODUCTS)}
    return frame.with_columns(
        (pl.col("units") * pl.col("product").replace_strict(prices)).alias("revenue")
    )


def gold_answer(
    table: pl.DataFrame, agg: str, measure: str, product: str, region: str, month: int
) -> str | None:
    rows = table.filter(
        (pl.col("product") == product) & (pl.col("region") == region) & (pl.col("month") == month)
    )[measure]
    if rows.len() == 0:
        return None
    value = {
        "total": rows.sum(),
        "average": rows.mean(),
        "largest": rows.max(),
        "smallest": rows.min(),
    }[agg]
    return format_number(round(float(value), 2))


def generate_tasks(n_tasks: int, seed: int) -> list[Task]:
    tasks = []
    index = 0
    while len(tasks) < n_tasks:
        rng = random.Random(f"{seed}:table:{index}")
        table_seed = rng.randrange(2**31)
        table = make_table(table_seed)
        picked = (
            rng.choice(list(AGGREGATES)),
            rng.choice(MEASURES),
            rng.choice(PRODUCTS),
            rng.choice(REGIONS),
            rng.randint(1, 6),
        )
        answer = gold_answer(table, *picked)
        index += 1
        if answer is None:  # no matching rows: ask something answerable instead
            continue
        agg, measure, product, region, month = picked
        question = _QUESTION.format(
            agg=agg, measure=measure, product=product, region=region, month=month
        )
        task_id = f"table-{stable_id(BENCHMARK, seed, index)[:10]}"
        tasks.append(
            Task(task_id, question, table_seed, agg, measure, product, region, month, answer)
        )
    return tasks


def parse_question(text: str) -> tuple[str, str, str, str, int]:
    m = _PARSE.search(text)
    if not m:
        raise ValueError("cannot parse the question")
    agg, measure, product, region, month = m.groups()
    return agg, measure, product, region, int(month)


def query_for(agg: str, measure: str, product: str, region: str, month: int) -> str:
    """The SQL a careful analyst writes for the question (the reference policy's query)."""
    return (
        f"SELECT ROUND({AGGREGATES[agg]}({measure}), 2) AS value FROM sales "
        f"WHERE product = '{product}' AND region = '{region}' AND month = {month}"
    )


_READ_ONLY = re.compile(r"^\s*(select|with)\b", re.I)


SQL_TIME_LIMIT_S = 5.0
"""Wall-time limit of one agent query: a runaway join is interrupted, not waited for."""


def run_sql(
    con: duckdb.DuckDBPyConnection,
    query: str,
    max_rows: int = 20,
    time_limit_s: float = SQL_TIME_LIMIT_S,
) -> str:
    """Run one read-only query; anything else is refused, so no episode can change the
    shared database another episode reads. The agent's SQL is contained like its Python:
    no file system (`_database`), a memory cap, a wall-time limit, at most `max_rows` rows
    back. A hit limit is reported to the agent as the tool's error. Known gap: DuckDB
    checks for the interrupt between vectors, and a few operators (building one huge list)
    run long before they look; the memory cap still bounds them."""
    if not _READ_ONLY.match(query) or query.strip().rstrip(";").count(";"):
        return "Error: only a single SELECT query is allowed"
    timer = threading.Timer(time_limit_s, con.interrupt)
    timer.start()
    try:
        result = con.execute(query)
        names = [d[0] for d in result.description or []]
        rows = result.fetchmany(max_rows + 1)
    except duckdb.InterruptException:
        return f"Error: the query ran past its time limit ({time_limit_s:g} s) and was stopped"
    except duckdb.Error as exc:
        return f"Error: {str(exc).splitlines()[0]}"
    finally:
        timer.cancel()
    lines = [",".join(names)] + [
        ",".join(
            "" if v is None else format_number(v) if isinstance(v, float) else str(v) for v in row
        )
        for row in rows[:max_rows]
    ]
    if len(rows) > max_rows:
        lines.append(f"... (more than {max_rows} rows)")
    return "\n".join(lines)


SQL_MEMORY = "256MB"


@lru_cache(maxsize=1)
def _database() -> duckdb.DuckDBPyConnection:
    """One in-memory database for every episode: no file access (an agent cannot read
    or write files through SQL), a memory cap, one thread."""
    return duckdb.connect(
        config={"enable_external_access": False, "memory_limit": SQL_MEMORY, "threads": "1"}
    )


class TableQAEnv(AnswerEnv):
    """A cursor on the shared database with the task's table as the view `sales`."""

    benchmark, modality, category = BENCHMARK, MODALITY, CATEGORY
    _con: duckdb.DuckDBPyConnection | None = None

    def reset(self) -> str:
        self._start()
        if self._con is not None:
            self._con.close()
        # a cursor on one shared in-memory database: 1000x cheaper than a new connection;
        # registered views are private to the cursor and queries are read-only (run_sql)
        self._con = _database().cursor()
        self._con.register("sales", make_table(self.task.seed).to_arrow())
        return (
            "Answer the question from the table `sales` (columns: region, product, month, "
            f"units, revenue; regions: {', '.join(REGIONS)}; products: "
            f"{', '.join(PRODUCTS)}). Tools: sql(query), final_answer(answer).\n\n"
            f"Question: {self.task.question}"
        )

    def tools(self) -> dict[str, Tool]:
        def sql(args: dict) -> str:
            assert self._con is not None, "reset() first"
            return run_sql(self._con, str(args.get("query", "")))

        return {"sql": sql}

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        return numeric(answer, gold)


def make_tasks(cfg: dict, seed: int) -> list[Task]:
    """The registry's entry point: tasks from the benchmark's config section."""
    return generate_tasks(cfg["n_tasks"], seed)


Env = TableQAEnv
