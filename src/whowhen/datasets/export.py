"""Export a labelled dataset as Who&When-format JSON files, one per trajectory.

So built datasets can be fed to tools written for Who&When, and so an export →
import round trip checks that labels survive exactly. File names are the run id (a
hash): nothing in a name reveals the injected step or mode.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from whowhen.io import write_text


def _content(row: dict) -> str:
    """The step text a reader sees, with the tool call written out when there is one."""
    if row["tool"]:
        return f"{row['content']}\n{row['tool']}({row['tool_args'] or ''})"
    return row["content"]


def to_who_and_when(runs: pl.DataFrame, steps: pl.DataFrame, labels: pl.DataFrame) -> dict:
    """{file name: Who&When record} for every labelled run."""
    by_run = {k[0]: f.sort("step") for k, f in steps.group_by("run_id")}
    out = {}
    joined = labels.join(runs, on="run_id", how="inner", suffix="_run")
    for row in joined.sort("run_id").iter_rows(named=True):
        history = by_run.get(row["run_id"], steps.clear())
        out[f"{row['run_id']}.json"] = {
            "question": row["question"] or "",
            "question_ID": row["task_id"],
            "ground_truth": row["gold_answer"],
            "is_correct": False,
            "history": [
                {"content": _content(s), "role": s["role"] or "assistant", "name": s["actor"]}
                for s in history.iter_rows(named=True)
            ],
            "mistake_agent": row["decisive_agent"],
            "mistake_step": str(row["decisive_step"]),
            "mistake_reason": row["reason"] or row["mode"] or "",
        }
    return out


def export_who_and_when(
    runs: pl.DataFrame, steps: pl.DataFrame, labels: pl.DataFrame, out_dir: str | Path
) -> list[Path]:
    records = to_who_and_when(runs, steps, labels)
    return [
        write_text(Path(out_dir) / name, json.dumps(rec, indent=2, ensure_ascii=False))
        for name, rec in records.items()
    ]
