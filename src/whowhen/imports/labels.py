"""Join a labels file to imported runs that came without labels (traces, eval logs): run
id -> decisive agent, step, optional mode. CSV, JSON Lines, or a JSON list of objects;
the run id column may be called `run_id` or `trace_id`. A bad row is one line naming the
file, the row and the field; the good rows still label their runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from whowhen.errors import WhowhenError, preview
from whowhen.imports.common import ImportResult, label_row
from whowhen.io import csv_table, load_json, not_utf8, parse_json, sheet_value
from whowhen.schema import LABELS, to_arrow


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """The file's rows as dicts (CSV by its header, JSON list, or JSON Lines); a file that
    cannot be read is a WhowhenError naming it (and the line, for JSON Lines)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise WhowhenError(f"cannot read ({exc.strerror or exc})", path=str(path)) from None
    if path.suffix == ".csv":
        return csv_table(data, str(path))[1]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WhowhenError(not_utf8(exc), path=str(path)) from None
    try:
        whole = load_json(text)
    except json.JSONDecodeError:
        whole = None
    except ValueError as exc:  # nested too deeply
        raise WhowhenError(f"bad JSON ({exc})", path=str(path)) from None
    if isinstance(whole, list):
        return [d if isinstance(d, dict) else {} for d in whole]
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            row = parse_json(line, path=str(path), record=f"line {number}")
            rows.append(row if isinstance(row, dict) else {})
    return rows


def attach_labels(result: ImportResult, path: str | Path) -> int:
    """Label `result`'s runs from the file at `path`; returns how many were labelled."""
    tables = result.tables()
    steps = tables["steps"]
    known = set(tables["runs"]["run_id"])
    already = set(tables["labels"]["run_id"])
    speaker = {(r, s): a for r, s, a in steps.select("run_id", "step", "actor").iter_rows()}
    kind = {(r, s): k for r, s, k in steps.select("run_id", "step", "kind").iter_rows()}
    rows, done = [], set()
    for k, raw in enumerate(read_rows(path), 1):
        raw = _from_sheet(raw)
        if raw is None:  # a review sheet's row nobody has labelled yet
            continue
        try:
            row = _label(raw, known | already, speaker, kind, done)
        except WhowhenError as exc:
            result.fail(WhowhenError(str(exc), path=str(path), record=str(k)))
            continue
        done.add(row["run_id"])
        if row["run_id"] in already:
            result.fail(f"{path}: record {k}: run {row['run_id']} is labelled already: kept")
            continue
        rows.append(row)
    if rows:
        result.frames["labels"].append(pl.from_arrow(to_arrow(rows, LABELS)))
    return len(rows)


SHEET = {"item_id": "run_id", "labelled_agent": "agent", "labelled_step": "step"}
"""A filled review sheet's columns (`whowhen review export --unlabelled`), as label columns."""


def _from_sheet(raw: dict[str, Any]) -> dict[str, Any] | None:
    """A review sheet row as a label row (its cells as written before the sheet kept them
    from reading as formulas); None for one left blank."""
    if "item_id" not in raw:
        return raw
    row = {SHEET.get(k, k): sheet_value(v) if isinstance(v, str) else v for k, v in raw.items()}
    if not str(row.get("agent") or "").strip() and not str(row.get("step") or "").strip():
        return None
    return row


def _label(
    raw: dict[str, Any],
    known: set[str],
    speaker: dict[tuple[str, int], str],
    kind: dict[tuple[str, int], str],
    done: set[str],
) -> dict[str, Any]:
    run_id = str(raw.get("run_id") or raw.get("trace_id") or "")
    if not run_id:
        raise WhowhenError("no run id (column run_id or trace_id)", field="run_id")
    if run_id not in known:
        raise WhowhenError(f"run {preview(run_id)} is not in the import", field="run_id")
    if run_id in done:
        raise WhowhenError(f"run {preview(run_id)} is labelled twice in the file", field="run_id")
    agent = raw.get("agent", raw.get("decisive_agent"))
    if not isinstance(agent, str) or not agent.strip():
        raise WhowhenError("needs the decisive agent's name", field="agent")
    try:
        step = int(str(raw.get("step", raw.get("decisive_step"))).strip())
    except ValueError:
        raise WhowhenError(
            f"{preview(raw.get('step'))} is not a step index", field="step"
        ) from None
    if (run_id, step) not in speaker:
        raise WhowhenError(f"run {run_id} has no step {step}", field="step")
    if kind[(run_id, step)] == "observation":
        raise WhowhenError(f"step {step} is tool output, not an agent's step", field="step")
    mode = raw.get("mode") or None
    return label_row(run_id, agent.strip(), step, raw.get("reason") or None, mode=mode)
