"""The DuckDB worker that runs the agent's SQL inside the sandbox.

Usage: `python -I -S sql_worker.py SITE_DIR MEMORY TIME_LIMIT_S` (SITE_DIR holds the
`duckdb` package, bound read-only). One JSON request per line on stdin:
`{"table": key, "columns": [[name, type]...], "rows": [...]}` creates a table once;
`{"query": sql, "table": key, "max_rows": n}` runs a query against it as `sales`;
`{"drop": key}` drops a table (the parent keeps only a few: each holds memory blocks, and
hundreds of them outgrow the address-space limit).
One JSON reply per line on stdout. The database has no file access, one thread and a
memory cap; a query is interrupted at TIME_LIMIT_S (the parent kills the sandbox if it
does not stop). Cells are cut to CELL_CHARS so that no reply can be huge.
"""

from __future__ import annotations

import json
import sys
import threading

CELL_CHARS = 1000


def _cell(value: object) -> object:
    if value is None or type(value) is float:
        return value
    text = str(value)
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS] + f"…({len(text)} chars)"


def main(site: str, memory: str, time_limit_s: float) -> None:
    sys.path.insert(0, site)
    import duckdb  # deferred: found only once SITE_DIR is on the path

    con = duckdb.connect(
        config={"enable_external_access": False, "memory_limit": memory, "threads": "1"}
    )
    for line in sys.stdin:
        req = json.loads(line)
        if "drop" in req:
            con.execute(f'DROP TABLE IF EXISTS "t_{req["drop"]}"')
            reply: dict = {"ok": True}
        elif "rows" in req:
            name = f"t_{req['table']}"
            cols = ", ".join(f'"{c}" {t}' for c, t in req["columns"])
            con.execute(f'CREATE TABLE IF NOT EXISTS "{name}" ({cols})')
            if not con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]:
                _insert(con, name, len(req["columns"]), req["rows"])
            reply = {"ok": True}
        else:
            reply = _query(duckdb, con, req, time_limit_s)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def _insert(con, name: str, n_cols: int, rows: list, chunk: int = 500) -> None:
    """Rows in statements of `chunk` rows each: `executemany` runs one statement per row,
    ten times slower, and loading tables was most of a table_qa build's SQL time."""
    row = "(" + ", ".join("?" for _ in range(n_cols)) + ")"
    for i in range(0, len(rows), chunk):
        part = rows[i : i + chunk]
        marks = ", ".join(row for _ in part)
        con.execute(f'INSERT INTO "{name}" VALUES {marks}', [v for r in part for v in r])


def _query(duckdb, con, req: dict, time_limit_s: float) -> dict:
    timer = threading.Timer(req.get("time_limit_s", time_limit_s), con.interrupt)
    timer.start()
    try:
        con.execute(f'CREATE OR REPLACE TEMP VIEW sales AS SELECT * FROM "t_{req["table"]}"')
        result = con.execute(req["query"])
        names = [d[0] for d in result.description or []]
        rows = result.fetchmany(req["max_rows"] + 1)
    except duckdb.InterruptException:
        return {"timeout": True}
    except Exception as exc:
        return {"error": (str(exc).splitlines() or [type(exc).__name__])[0][:500]}
    finally:
        timer.cancel()
    return {"names": names, "rows": [[_cell(v) for v in row] for row in rows]}


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
