"""The DuckDB worker that runs the agent's SQL inside the sandbox.

Usage: `python -I -S sql_worker.py SITE_DIR MEMORY TIME_LIMIT_S` (SITE_DIR holds the
`duckdb` package, bound read-only). One JSON request per line on stdin, one JSON reply
per line on stdout, for every request whatever fails:
`{"table": key, "columns": [[name, type]...], "rows": [...]}` stores a table once;
`{"drop": key}` drops one (the parent keeps a bounded number);
`{"query": sql, "table": key, "max_rows": n, "time_limit_s": s}` runs the agent's query
against that table as `sales`. A reply is `{"ok": true}`, a result (`names`, `rows`),
`{"error": ...}` (the agent's SQL failed), `{"timeout": true}`, `{"memory": true, ...}`
(the query ran out of memory), or `{"fault": ...}` (the worker itself failed: not the
agent's doing).

Read-only by construction, whatever SQL arrives: the tables live in a database file in
the sandbox's private /tmp that only a writer connection of this script touches. The
agent's SQL runs on another database instance that opened the file READ_ONLY, with
external access off and its configuration locked (no SET/PRAGMA of a global setting, no
ATTACH of another file, and the file cannot be attached again writable while it is
attached at all), each query in a fresh connection: its temporary objects (a `sales` of
its own, a macro named like a built-in), session settings and open transaction end with
it. No SQL can write to the reply stream: file descriptors 1 and 2 point at /dev/null
(DuckDB prints profiles there), the replies go to a private copy of stdout.

A query is interrupted at its time limit by one thread started with the worker: a thread
started per query could not start once a query had filled the address space, and the
worker died on the next, plain query. Cells are cut to CELL_CHARS and a reply to
REPLY_CHARS so that no reply can be huge.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from types import ModuleType
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

CELL_CHARS = 1000
REPLY_CHARS = 500_000
STORE = "tables.duckdb"
"""The database file, in the working directory (the sandbox's private /tmp); 16 KB blocks
keep a 360-row table at about 20 KB of the sandbox's disk (256 KB with the default)."""


def _cell(value: object) -> object:
    if value is None or type(value) is float:
        return value
    text = str(value)
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS] + f"…({len(text)} chars)"


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:500]


class Interrupter:
    """Interrupts the armed connection at its deadline; one thread for the worker's life."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._armed: tuple[float, DuckDBPyConnection] | None = None
        threading.Thread(target=self._run, daemon=True).start()

    def arm(self, con: DuckDBPyConnection, seconds: float) -> None:
        with self._cond:
            self._armed = (time.monotonic() + seconds, con)
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._armed = None

    def _run(self) -> None:
        with self._cond:
            while True:
                if self._armed is None:
                    self._cond.wait()
                    continue
                deadline, con = self._armed
                left = deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                con.interrupt()
                self._armed = None


class Tables:
    """The writer (never given agent SQL) and the read-only instance the agent queries."""

    def __init__(self, duckdb: ModuleType, memory: str, time_limit_s: float) -> None:
        self.duckdb, self.memory, self.time_limit_s = duckdb, memory, time_limit_s
        self.path = os.path.abspath(STORE)
        self.config = {"memory_limit": memory, "threads": "1", "async_threads": "0"}
        self.writer = duckdb.connect(config=self.config)
        self.writer.execute(f"ATTACH '{self.path}' AS store (BLOCK_SIZE 16384)")
        self.writer.execute("DETACH store")
        self.writing = False
        self.reader: DuckDBPyConnection | None = None
        self.interrupter = Interrupter()

    def _write(self, statements: list[tuple[str, list]]) -> None:
        """Close the reader, attach the file to the writer (once for a run of writes)."""
        if self.reader is not None:
            self.reader.close()
            self.reader = None
        if not self.writing:
            self.writer.execute(f"ATTACH '{self.path}' AS store")
            self.writing = True
        for sql, params in statements:
            self.writer.execute(sql, params)

    def _read(self) -> DuckDBPyConnection:
        """The read-only instance, opened again after writes (the file is detached from the
        writer first: one instance at a time has it)."""
        if self.writing:
            self.writer.execute("CHECKPOINT store")
            self.writer.execute("DETACH store")
            self.writing = False
        if self.reader is None:
            config = {
                **self.config,
                "access_mode": "READ_ONLY",
                "enable_external_access": False,
                "lock_configuration": True,
            }
            self.reader = self.duckdb.connect(self.path, config=config)
        return self.reader

    def store(self, key: str, columns: list, rows: list, chunk: int = 500) -> dict:
        """Rows in statements of `chunk` rows each: `executemany` runs one statement per
        row, ten times slower."""
        name = f'store."t_{key}"'
        cols = ", ".join(f'"{c}" {t}' for c, t in columns)
        row = "(" + ", ".join("?" for _ in columns) + ")"
        writes = [(f"DROP TABLE IF EXISTS {name}", []), (f"CREATE TABLE {name} ({cols})", [])]
        for i in range(0, len(rows), chunk):
            part = rows[i : i + chunk]
            marks = ", ".join(row for _ in part)
            writes.append((f"INSERT INTO {name} VALUES {marks}", [v for r in part for v in r]))
        self._write(writes)
        return {"ok": True}

    def drop(self, key: str) -> dict:
        self._write([(f'DROP TABLE IF EXISTS store."t_{key}"', [])])
        return {"ok": True}

    def query(self, req: dict) -> dict:
        try:
            cur = self._session(req["table"])
        except Exception:  # e.g. an earlier query renamed the catalog: start the instance anew
            self._forget()
            try:
                cur = self._session(req["table"])
            except Exception as exc:  # the worker's own step failed: not the agent's SQL
                self._forget()
                return {"fault": _first_line(exc)}
        try:
            reply = self._run(cur, req)
        finally:
            cur.close()
        if reply.get("memory"):
            self._forget()  # what DuckDB held goes with the instance
        return reply

    def _session(self, key: str) -> DuckDBPyConnection:
        """A fresh connection with the table as its own temporary view `sales`."""
        cur = self._read().cursor()
        try:
            cur.execute(f'CREATE TEMP VIEW sales AS SELECT * FROM "t_{key}"')
        except BaseException:
            cur.close()
            raise
        return cur

    def _run(self, cur: DuckDBPyConnection, req: dict) -> dict:
        duckdb = self.duckdb
        self.interrupter.arm(cur, req.get("time_limit_s", self.time_limit_s))
        try:
            result = cur.execute(req["query"])
            names = [d[0] for d in result.description or []]
            rows = result.fetchmany(req["max_rows"] + 1)
            return {"names": names, "rows": [[_cell(v) for v in row] for row in rows]}
        except duckdb.InterruptException:
            return {"timeout": True}
        except (duckdb.OutOfMemoryException, MemoryError) as exc:
            return {"memory": True, "error": _first_line(exc)}
        except Exception as exc:
            return {"error": _first_line(exc)}
        finally:
            self.interrupter.disarm()

    def _forget(self) -> None:
        """Drop the read-only instance; the next query opens it again."""
        if self.reader is not None:
            try:
                self.reader.close()
            finally:
                self.reader = None


def _answer(tables: Tables, line: str) -> dict:
    try:
        req = json.loads(line)
        if "drop" in req:
            return tables.drop(req["drop"])
        if "rows" in req:
            return tables.store(req["table"], req["columns"], req["rows"])
        return tables.query(req)
    except MemoryError:
        return {"fault": "MemoryError"}
    except Exception as exc:
        return {"fault": f"{type(exc).__name__}: {_first_line(exc)}"}


def _reply(out: TextIO, reply: dict) -> None:
    try:
        text = json.dumps(reply)
    except MemoryError:  # a result too large to write out: the query's doing
        text = json.dumps({"memory": True, "error": "MemoryError"})
    except (ValueError, TypeError) as exc:
        text = json.dumps({"fault": f"the reply could not be written ({type(exc).__name__})"})
    if len(text) > REPLY_CHARS:
        text = json.dumps({"error": f"the result is too large to return ({len(text)} chars)"})
    out.write(text + "\n")
    out.flush()


def main(site: str, memory: str, time_limit_s: float) -> None:
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    sys.stderr = os.fdopen(os.dup(2), "w", buffering=1, encoding="utf-8", errors="replace")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    sys.path.insert(0, site)
    import duckdb  # deferred: found only once SITE_DIR is on the path

    tables = Tables(duckdb, memory, time_limit_s)
    for line in sys.stdin:
        _reply(out, _answer(tables, line))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
