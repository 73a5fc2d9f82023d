"""The table_qa environment: its tools and evaluator."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import threading
from functools import lru_cache
from pathlib import Path

import polars as pl

from whowhen.benchmarks.base import AnswerEnv, Tool
from whowhen.benchmarks.scoring import numeric
from whowhen.benchmarks.table_qa.tasks import (
    BENCHMARK,
    CATEGORY,
    MODALITY,
    PRODUCTS,
    REGIONS,
    make_table,
    table_csv,
)
from whowhen.errors import InfraError, preview
from whowhen.sandbox import Limits
from whowhen.sandbox.worker import Worker, WorkerFailed
from whowhen.tools import FINAL_ANSWER_TOOL, TERMINAL, computer_terminal, format_number

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
SQL_MEMORY = "256MB"
SQL_LIMITS = Limits(wall_s=SQL_TIME_LIMIT_S, cpu_s=3600, memory_mb=1024, disk_mb=16)
"""The worker's sandbox: DuckDB's own cap is 256 MB; the address space is capped at 1 GB
for whatever DuckDB allocates outside it (one huge string, say). The tables' file takes
about 20 KB of the 16 MB disk per table."""
SETUP_TIMEOUT_S = 30.0
"""How long a table setup or drop may take before the worker counts as broken."""
_TYPES = {pl.String: "VARCHAR", pl.Int64: "BIGINT", pl.Int32: "INTEGER", pl.Float64: "DOUBLE"}


def _duckdb_files() -> tuple[str, tuple[str, ...]]:
    """The site dir that holds `duckdb`, and the package's paths to bind read-only (its
    native module and its metadata, which it reads for its version)."""
    spec = importlib.util.find_spec("duckdb")  # found, not imported: the worker imports it
    if spec is None or spec.origin is None:
        raise InfraError("the SQL worker cannot start: duckdb is not installed (pip install -e .)")
    package = Path(spec.origin).parent
    site = package.parent
    extra = [*site.glob("_duckdb*.so"), *site.glob("duckdb-*.dist-info")]
    return str(site), (str(package), *(str(p) for p in extra))


class SqlSandbox:
    """The agent's SQL runs in a sandboxed DuckDB worker, never in this process: every
    query is bounded in time and memory whatever operator it uses, the worker cannot see
    a file, and the tables it holds are read-only to the agent's SQL (see `sql_worker`).
    Tables are sent to the worker once per worker process, and at most `MAX_TABLES` stay
    there (the least recently used is dropped): they live in a file, not in DuckDB's
    memory, where a few hundred tasks' tables had made queries fail with an out-of-memory
    error that was then recorded as the observation.

    A worker that does not start or does not answer a table setup raises `InfraError`
    (the run is the infrastructure's failure, not the agent's); what the agent's query
    causes (an SQL error, its time or memory limit) is its observation."""

    MAX_TABLES = 256

    def __init__(self, site: str | None = None) -> None:
        found, binds = _duckdb_files()
        script = str(Path(__file__).with_name("sql_worker.py"))
        args = [site or found, SQL_MEMORY, str(SQL_TIME_LIMIT_S)]
        self.worker = Worker(script, args, SQL_LIMITS, binds)
        self._sent: dict[str, None] = {}  # tables in the worker, least recently used first
        self._generation = -1
        self._last: tuple[pl.DataFrame, str] | None = None  # the last table and its key
        self._lock = threading.Lock()  # model-played runs share the worker across threads

    def _key(self, table: pl.DataFrame) -> str:
        """The table's content hash; the last one is remembered (an episode asks about
        the same table again and again, and hashing it took a tenth of the SQL time)."""
        if self._last is not None and self._last[0] is table:
            return self._last[1]
        key = hashlib.sha256(table.write_csv().encode()).hexdigest()[:16]
        self._last = (table, key)
        return key

    def query(self, table: pl.DataFrame, query: str, max_rows: int, time_limit_s: float) -> dict:
        """The worker's reply: a result (`names`, `rows`), `error`, `timeout` or `memory`."""
        with self._lock:
            return self._query(table, query, max_rows, time_limit_s)

    def _query(self, table: pl.DataFrame, query: str, max_rows: int, time_limit_s: float) -> dict:
        key = self._key(table)
        try:
            generation = self.worker.started()
        except WorkerFailed as exc:
            raise InfraError(f"the SQL worker did not start: {exc.detail}") from None
        if self._generation != generation:
            self._sent, self._generation = {}, generation
        if key not in self._sent:
            while len(self._sent) >= self.MAX_TABLES:
                old = next(iter(self._sent))
                self._setup({"drop": old}, "drop a table")
                del self._sent[old]
            cols = [[c, _TYPES.get(t.base_type(), "VARCHAR")] for c, t in table.schema.items()]
            self._setup({"table": key, "columns": cols, "rows": table.rows()}, "store a table")
        self._sent.pop(key, None)
        self._sent[key] = None
        req = {"query": query, "table": key, "max_rows": max_rows, "time_limit_s": time_limit_s}
        try:
            reply = self.worker.ask(req, time_limit_s + 1)
        except WorkerFailed as exc:
            if exc.kind == "timeout":
                return {"timeout": True}
            if exc.kind == "memory_limit":
                return {"memory": True}
            raise InfraError(
                f"the SQL worker {_failed(exc)} during a query: {exc.detail}"
            ) from None
        if "fault" in reply:
            raise InfraError(f"the SQL worker failed to run a query: {reply['fault']}")
        return reply

    def _setup(self, request: dict, what: str) -> None:
        """A table setup or drop, which the worker must answer with ok."""
        try:
            reply = self.worker.ask(request, SETUP_TIMEOUT_S)
        except WorkerFailed as exc:
            when = "" if exc.kind == "start" else f" when asked to {what}"
            raise InfraError(f"the SQL worker {_failed(exc)}{when}: {exc.detail}") from None
        if not reply.get("ok"):
            reason = reply.get("fault") or reply.get("error") or preview(reply)
            raise InfraError(f"the SQL worker could not {what}: {reason}")


def _failed(exc: WorkerFailed) -> str:
    return {
        "start": "did not start",
        "timeout": "did not answer in time",
        "memory_limit": "died at its memory limit",
        "protocol": "answered garbage",
    }.get(exc.kind, "died")


@lru_cache(maxsize=1)
def sql_sandbox() -> SqlSandbox:
    """One worker per process, shared by every episode (its tables are read-only)."""
    return SqlSandbox()


_PROBE = pl.DataFrame({"x": [42]})


def preflight() -> None:
    """Start the SQL worker once and run a trivial query on a one-cell table; raise
    InfraError naming the cause if that does not work (a broken installation stops a
    shard before any run is recorded)."""
    reply = sql_sandbox().query(_PROBE, "SELECT x FROM sales", 5, SQL_TIME_LIMIT_S)
    if reply.get("rows") != [["42"]]:
        raise InfraError(f"the SQL worker did not answer a trivial query: {preview(reply)}")


def run_sql(
    table: pl.DataFrame,
    query: str,
    max_rows: int = 20,
    time_limit_s: float = SQL_TIME_LIMIT_S,
) -> str:
    """Run one query against `table` (as `sales`). The worker's storage makes every query
    read-only; a statement that does not start with SELECT or WITH, or holds several, is
    refused here as well (the tool's contract: one query). A hit limit is reported to the
    agent as the tool's error; at most `max_rows` rows come back."""
    if not _READ_ONLY.match(query) or query.strip().rstrip(";").count(";"):
        return "Error: only a single SELECT query is allowed"
    reply = sql_sandbox().query(table, query, max_rows, time_limit_s)
    if reply.get("timeout"):
        return f"Error: the query ran past its time limit ({time_limit_s:g} s) and was stopped"
    if reply.get("memory"):
        return f"Error: the query ran past its memory limit ({SQL_MEMORY}) and was stopped"
    if "error" in reply:
        return f"Error: {reply['error']}"
    rows = reply["rows"]
    lines = [",".join(reply["names"])] + [
        ",".join(
            "" if v is None else format_number(v) if isinstance(v, float) else str(v) for v in row
        )
        for row in rows[:max_rows]
    ]
    if len(rows) > max_rows:
        lines.append(f"... (more than {max_rows} rows)")
    else:  # how much came back, as a SQL shell reports it
        lines.append(f"({len(rows)} row{'' if len(rows) == 1 else 's'})")
    return "\n".join(lines)


DATA_FILE = "sales.csv"
"""The table as a group chat's programs read it (`tools.DATA_DIR`/sales.csv, read-only)."""


class TableQAEnv(AnswerEnv):
    """The task's table as `sales`, queried through the sandboxed SQL worker; for the
    programs a group chat's terminal runs, the same rows as a CSV file."""

    benchmark, modality, category = BENCHMARK, MODALITY, CATEGORY

    def tools(self) -> dict[str, Tool]:
        table = make_table(self.task.seed)  # memoized: every episode of a task shares it
        data = {DATA_FILE: table_csv(self.task.seed)}
        return {
            "sql": lambda args: run_sql(table, str(args.get("query", ""))),
            TERMINAL: lambda args: computer_terminal(args, data),
        }

    def reset(self) -> str:
        self._start()
        columns = "region, product, month, units, revenue"
        return (
            f"Answer the question from the table `sales` (columns: {columns}; regions: "
            f"{', '.join(REGIONS)}; products: {', '.join(PRODUCTS)}). Tools: sql(query), "
            f"final_answer(answer).\n\nQuestion: {self.task.question}"
        )

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        return numeric(answer, gold)


Env = TableQAEnv
