"""What every importer returns: rows for the runs/steps/labels tables plus per-record errors.

Each record (one file, one JSONL line, one trajectory) is validated on its own, so a
bad one is reported by file, record and field and the others still import.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from whowhen.errors import WhowhenError, preview
from whowhen.io import write_json
from whowhen.schema import LABELS, RUNS, STEPS, empty, to_arrow, write_table

TABLE_SPECS = {"runs": RUNS, "steps": STEPS, "labels": LABELS}


def _unstorable(rows: dict[str, list[dict[str, Any]]]) -> str:
    """`table.column` of the first value Arrow cannot store in its column's type."""
    for name, spec in TABLE_SPECS.items():
        for column in spec.schema:
            try:
                pa.array([row.get(column.name) for row in rows[name]], type=column.type)
            except (pa.ArrowException, UnicodeEncodeError, OverflowError):
                return f"{name}.{column.name}"
    return "?"


@dataclass
class ImportResult:
    """Imported rows by table, and the records that could not be imported (one line each)."""

    frames: dict[str, list[pl.DataFrame]] = field(
        default_factory=lambda: {name: [] for name in TABLE_SPECS}
    )
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # kept records' doubtful labels
    info: dict[str, Any] = field(default_factory=dict)  # how it was read, for the manifest

    def add(
        self,
        run: dict[str, Any],
        steps: list[dict[str, Any]],
        label: dict[str, Any] | None,
        source: str,
        record: str,
    ) -> bool:
        """Validate one record's rows together; keep them, or keep the error and go on."""
        try:
            rows = {"runs": [run], "steps": steps, "labels": [label] if label else []}
            checked = {
                name: pl.from_arrow(to_arrow(rows[name], spec))
                for name, spec in TABLE_SPECS.items()
            }
        except WhowhenError as exc:
            text = str(exc)
            if exc.record is not None and str(exc.record) == str(record):  # named once
                text = text.replace(f"record {record}: ", "", 1)
            self.errors.append(f"{source}: record {record}: {text}".replace("<memory>: ", ""))
            return False
        except (pa.ArrowException, UnicodeEncodeError, OverflowError) as exc:
            # a value of the wrong type, text that is not encodable (a lone surrogate from a
            # JSON escape), an integer over 64 bits
            problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            error = WhowhenError(
                f"value cannot be stored ({preview(problem, quote=False)})",
                path=source,
                record=record,
                field=_unstorable(rows),
            )
            self.errors.append(str(error).replace("<memory>: ", ""))
            return False
        for name, frame in checked.items():
            self.frames[name].append(frame)
        return True

    def fail(self, error: WhowhenError | str) -> None:
        self.errors.append(str(error))

    def tables(self) -> dict[str, pl.DataFrame]:
        out = {}
        for name, spec in TABLE_SPECS.items():
            frames = self.frames[name]
            out[name] = pl.concat(frames) if frames else empty(spec)
        return out

    @property
    def n_runs(self) -> int:
        return sum(f.height for f in self.frames["runs"])

    def write(self, out_dir: str | Path) -> dict[str, Path]:
        """Write runs/steps/labels Parquet (the same layout as `results/dataset/`)."""
        out_dir = Path(out_dir)
        return {
            name: write_table(frame, TABLE_SPECS[name], out_dir / f"{name}.parquet")
            for name, frame in self.tables().items()
        }

    def manifest(self, fmt: str) -> dict[str, Any]:
        """What was imported and how: runs per subset, skipped records, label warnings,
        and the format's settings (Who&When's tool speakers, which `show` names)."""
        runs = self.tables()["runs"]
        counts = runs.group_by("subset").len().sort("subset", nulls_last=True).rows()
        return {
            "format": fmt,
            **self.info,
            "runs": self.n_runs,
            "subsets": {"(none)" if s is None else s: n for s, n in counts},
            "skipped": len(self.errors),
            "label_warnings": len(self.warnings),
        }

    def write_manifest(self, path: str | Path, fmt: str) -> Path:
        """`manifest.json` (sorted keys, nothing run-dependent): same input, same bytes."""
        return write_json(path, self.manifest(fmt))


_NOT_REGULAR = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def regular_files(
    files: Iterable[Path], result: ImportResult, root: Path | None = None
) -> Iterator[Path]:
    """The regular files among `files` (links followed), lazily so reports keep file order.
    Any other entry named like a data file is reported and skipped without being opened:
    reading a FIFO waits for a writer forever, a device may never end. With `root` (the
    input folder they were listed from), a file whose real path is outside it (a link out
    of the folder, or into a linked folder elsewhere) is reported and skipped unread:
    importing a folder reads that folder, never what its links point at."""
    real_root = os.path.realpath(root) if root is not None else None
    for file in files:
        try:
            mode = os.stat(file).st_mode
        except OSError as exc:  # a dangling link, a name too long, no permission
            result.fail(WhowhenError(f"cannot read ({exc.strerror or exc})", path=str(file)))
            continue
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _NOT_REGULAR if test(mode)), "not a file")
            result.fail(WhowhenError(f"not a regular file ({kind}): not read", path=str(file)))
        elif real_root is not None and not _within(os.path.realpath(file), real_root):
            target = preview(os.path.realpath(file))
            error = f"a link to {target}, outside the input folder: not read"
            result.fail(WhowhenError(error, path=str(file)))
        else:
            yield file


def _within(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


def base_run(
    run_id: str, benchmark: str, task_id: str, system: str, topology: str, **extra: Any
) -> dict[str, Any]:
    """A runs row for an imported failure: not replayable, no cost known, success False."""
    row = {
        "run_id": run_id,
        "benchmark": benchmark,
        "subset": None,
        "task_id": task_id,
        "question": None,
        "modality": "text",
        "category": None,
        "system": system,
        "topology": topology,
        "policy": "imported",
        "seed": 0,
        "origin": "imported",
        "parent_run_id": None,
        "success": False,
        "score": 0.0,
        "final_answer": None,
        "gold_answer": None,
        "n_steps": 0,
        "end_reason": None,
        "tokens_in": 0,
        "tokens_out": 0,
        "cost_usd": 0.0,
        "meta": None,
    }
    row.update(extra)
    return row


def step_row(
    run_id: str,
    step: int,
    actor: str,
    content: str,
    *,
    role: str | None = None,
    kind: str = "message",
    tool: str | None = None,
    tool_args: str | None = None,
) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "step": step,
        "actor": actor,
        "role": role,
        "kind": kind,
        "content": content,
        "tool": tool,
        "tool_args": tool_args,
        "media": [],
        "tokens_in": 0,
        "tokens_out": 0,
        "cost_usd": 0.0,
        "latency_s": 0.0,
    }


def label_row(
    run_id: str,
    agent: str,
    step: int,
    reason: str | None,
    *,
    mode: str | None = None,
    category: str | None = None,
    source: str = "imported",
    split: str | None = "test",
) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "decisive_agent": agent,
        "decisive_step": step,
        "mode": mode,
        "category": category,
        "original_action": None,
        "replacement_action": None,
        "reason": reason,
        "source": source,
        "split": split,
    }
