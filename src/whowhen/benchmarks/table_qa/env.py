"""The table_qa environment: its tools and evaluator."""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import duckdb

from whowhen.benchmarks.base import AnswerEnv, Tool
from whowhen.benchmarks.scoring import numeric
from whowhen.benchmarks.table_qa.tasks import (
    BENCHMARK,
    CATEGORY,
    MODALITY,
    PRODUCTS,
    REGIONS,
    make_table,
)
from whowhen.tools import FINAL_ANSWER_TOOL, format_number

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


Env = TableQAEnv
