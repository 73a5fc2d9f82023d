"""Import a user's own trajectories (JSONL or Parquet) through a field mapping.

Two layouts: `trajectories` (one record per run, its steps in a list field) and
`steps` (one record per step, grouped by the run id field). The mapping says which
source field feeds which column; dotted names reach into nested objects.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from whowhen.errors import WhowhenError, preview
from whowhen.imports.common import ImportResult, base_run, label_row, step_row
from whowhen.imports.formats import FORMATS, ImportFormat
from whowhen.imports.who_and_when import agent_of_role
from whowhen.io import parse_json, read_yaml
from whowhen.schema import STEP_KINDS, canonical_json, stable_id

REQUIRED = ("run_id", "content", "decisive_agent", "decisive_step")
STEP_FIELDS = ("actor", "role", "content", "kind", "tool", "tool_args", "step")
RUN_FIELDS = (
    "run_id",
    "question",
    "gold_answer",
    "decisive_agent",
    "decisive_step",
    "reason",
    "system",
    "subset",
    "task_id",
    "mode",
    "category",
)
DEFAULT_FIELDS = {
    "run_id": "run_id",
    "history": "history",
    "actor": "name",
    "role": "role",
    "content": "content",
    "decisive_agent": "mistake_agent",
    "decisive_step": "mistake_step",
    "reason": "mistake_reason",
    "question": "question",
    "gold_answer": "ground_truth",
}
MAPPABLE = ("history", *RUN_FIELDS, *(f for f in STEP_FIELDS if f not in RUN_FIELDS))
"""Every column a mapping may name (the config schema's `imports.fields` lists the same)."""


def check_fields(
    fields: Any, source: str | None = None, where: str | None = None
) -> dict[str, str]:
    """`fields` if it maps known columns to source field names (text). Else one WhowhenError
    with a line per bad entry naming the file (`source`) and the field: a mistyped column
    would otherwise be ignored, and a number as a field name crash a record deep inside."""
    if not isinstance(fields, dict):
        raise WhowhenError(
            f"expected a mapping of column -> source field, got {type(fields).__name__}",
            path=source,
            field=where,
        )
    lines = []
    for column, name in fields.items():
        at = f"{where}.{column}" if where else str(column)
        if column not in MAPPABLE:
            problem = f"unknown column (known: {', '.join(MAPPABLE)})"
        elif not isinstance(name, str):
            problem = f"expected a source field name (string), got {preview(name)}"
        else:
            continue
        lines.append(str(WhowhenError(problem, path=source, field=preview(at, quote=False))))
    if lines:
        raise WhowhenError("\n".join(lines))
    return fields


def load_mapping(path: str | Path) -> dict[str, str]:
    """The checked `fields` of a mapping file (the whole file when it has no `fields` key);
    every problem, YAML syntax included, is a WhowhenError naming the file."""
    source = str(path)
    data = read_yaml(path, "mapping file")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise WhowhenError(
            f"mapping must be a YAML mapping, got {type(data).__name__}", path=source
        )
    if "fields" in data:
        return check_fields(data["fields"] or {}, source, "fields")
    return check_fields(data, source)


def _get(record: dict[str, Any], key: str | None) -> Any:
    if not key:
        return None
    value: Any = record
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _order(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return float("inf")


def _text(value: Any) -> str | None:
    """A text column's value: text as is, any other value as canonical JSON (or its str when
    JSON cannot hold it, e.g. a date from Parquet)."""
    if value is None or isinstance(value, str):
        return value
    try:
        return canonical_json(value)
    except (TypeError, ValueError):
        return str(value)


def read_records(path: Path, fmt: str, result: ImportResult) -> list[tuple[str, dict]]:
    """(record name, record) pairs; unreadable lines are reported and skipped."""
    if not path.exists():
        raise WhowhenError("input file not found", path=str(path))
    if fmt == "parquet":
        try:
            frame = pl.read_parquet(path)
        except Exception as exc:  # polars raises several error types for a bad file
            raise WhowhenError(
                f"not a readable Parquet file ({str(exc).splitlines()[0]})", path=str(path)
            ) from None
        return [(f"#{i}", row) for i, row in enumerate(frame.to_dicts())]
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise WhowhenError(f"cannot read ({exc.strerror})", path=str(path)) from None
    records = []
    # JSON Lines are split on "\n" only: str.splitlines would also split inside a record
    # at U+2028, U+0085 or a form feed, which JSON strings may hold unescaped
    for n, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            value = parse_json(line, path=str(path), record=f"line {n}")
        except WhowhenError as exc:
            result.fail(exc)
            continue
        if not isinstance(value, dict):
            result.fail(WhowhenError("not a JSON object", path=str(path), record=f"line {n}"))
            continue
        records.append((f"line {n}", value))
    return records


def _need(fields: dict[str, str], column: str, value: Any) -> Any:
    """`value`, or an error naming the source field the column is mapped from."""
    if value is None or value == "":
        raise WhowhenError(
            f"missing value (mapped from '{fields.get(column)}')",
            field=fields.get(column) or column,
        )
    return value


def _trajectory(
    name: str,
    run: dict[str, Any],
    steps: list[dict[str, Any]],
    fields: dict[str, str],
    dataset: str,
) -> tuple[dict, list[dict], dict]:
    """Map one trajectory to (run, steps, label) rows; raises naming the field."""
    source_id = str(_need(fields, "run_id", _get(run, fields.get("run_id"))))
    run_id = stable_id("imported", dataset, source_id)
    rows = _step_rows(run_id, steps, fields)
    if not rows:
        raise WhowhenError("trajectory has no steps", field=fields.get("history", "history"))
    agent = str(_need(fields, "decisive_agent", _get(run, fields.get("decisive_agent"))))
    step_index = _decisive_step(run, fields, len(rows))
    text = {c: _get(run, fields.get(c)) for c in RUN_FIELDS}
    run_row = base_run(
        run_id,
        dataset,
        str(text["task_id"] or source_id),
        str(text["system"] or dataset),
        "multi" if len({r["actor"] for r in rows}) > 2 else "single",
        subset=_text(text["subset"]),
        question=_text(text["question"]),
        gold_answer=None if text["gold_answer"] is None else str(text["gold_answer"]),
        n_steps=len(rows),
        meta=canonical_json({"source_id": source_id, "record": name}),
    )
    label = label_row(
        run_id,
        agent,
        step_index,
        _text(text["reason"]),
        mode=_text(text["mode"]),
        category=_text(text["category"]),
    )
    return run_row, rows, label


def _step_rows(
    run_id: str, steps: list[dict[str, Any]], fields: dict[str, str]
) -> list[dict[str, Any]]:
    """One trajectory's steps as STEPS rows; raises naming the step and the field."""
    rows = []
    for i, step in enumerate(steps):
        content = _get(step, fields.get("content"))
        if not isinstance(content, str):
            raise WhowhenError(
                "step content must be text", field=f"step {i}: {fields.get('content')}"
            )
        role = _get(step, fields.get("role"))
        actor = _get(step, fields.get("actor")) or (agent_of_role(str(role)) if role else None)
        kind = _get(step, fields.get("kind")) or "message"
        if kind not in STEP_KINDS:
            raise WhowhenError(
                f"kind {preview(kind)} is not one of {', '.join(STEP_KINDS)}",
                field=f"step {i}: {fields.get('kind')}",
            )
        rows.append(
            step_row(
                run_id,
                i,
                str(_need(fields, "actor", actor)),
                content,
                role=None if role is None else str(role),
                kind=kind,
                tool=_text(_get(step, fields.get("tool"))),
                tool_args=_text(_get(step, fields.get("tool_args"))),
            )
        )
    return rows


def _decisive_step(run: dict[str, Any], fields: dict[str, str], n_steps: int) -> int:
    """The label's step index, checked to be an integer within the trajectory."""
    raw = _need(fields, "decisive_step", _get(run, fields.get("decisive_step")))
    try:
        step_index = int(str(raw).strip())
    except ValueError:
        raise WhowhenError(
            f"{preview(raw)} is not a step index", field=fields.get("decisive_step")
        ) from None
    if not 0 <= step_index < n_steps:
        raise WhowhenError(
            f"step {preview(step_index)} out of range ({n_steps} steps)",
            field=fields.get("decisive_step"),
        )
    return step_index


def import_generic(
    path: str | Path, fmt: str, layout: str, fields: dict[str, str] | None, dataset: str
) -> ImportResult:
    """Import JSONL/Parquet trajectories with a field mapping (missing keys use defaults)."""
    path = Path(path)
    mapping = {**DEFAULT_FIELDS, **check_fields(fields or {})}
    result = ImportResult()
    records = read_records(path, fmt, result)
    if layout == "trajectories":
        groups = [(name, rec, _get(rec, mapping["history"])) for name, rec in records]
    else:
        by_run: dict[str, list[tuple[str, dict]]] = defaultdict(list)
        for name, rec in records:
            by_run[str(_get(rec, mapping["run_id"]))].append((name, rec))
        groups = []
        for items in by_run.values():
            if mapping.get("step"):
                items.sort(key=lambda item: _order(_get(item[1], mapping["step"])))
            merged = {k: v for _, rec in reversed(items) for k, v in rec.items() if v is not None}
            groups.append((items[0][0], merged, [rec for _, rec in items]))
    seen: dict[str, str] = {}  # run id -> the record that imported it
    for name, rec, steps in groups:
        if not isinstance(steps, list):
            result.fail(
                WhowhenError(
                    "steps must be a list", path=str(path), record=name, field=mapping["history"]
                )
            )
            continue
        try:
            run, step_rows, label = _trajectory(name, rec, steps, mapping, dataset)
        except WhowhenError as exc:
            result.fail(f"{path}: record {name}: {exc}")
            continue
        if run["run_id"] in seen:
            source_id = json.loads(run["meta"])["source_id"]
            result.fail(
                WhowhenError(
                    f"duplicate run id {preview(source_id)} (record {seen[run['run_id']]} has it)",
                    path=str(path),
                    record=name,
                    field=mapping["run_id"],
                )
            )
            continue
        if result.add(run, step_rows, label, str(path), name):
            seen[run["run_id"]] = name
    return result


def _reader(fmt: str) -> Callable[[Path, dict[str, Any], Path | None], ImportResult]:
    def read(path: Path, options: dict[str, Any], root: Path | None) -> ImportResult:
        """An `imports:` entry of this format: `layout`, `fields` (unset: the defaults)
        and `name`, the dataset's name in its runs."""
        return import_generic(path, fmt, options["layout"], options.get("fields"), options["name"])

    return read


for _fmt in ("jsonl", "parquet"):
    FORMATS.add(
        _fmt,
        ImportFormat(
            _fmt,
            _reader(_fmt),
            f"your own trajectories as {_fmt.upper()}",
            options=("name", "layout", "fields"),
            metavar="FILE",
        ),
    )
