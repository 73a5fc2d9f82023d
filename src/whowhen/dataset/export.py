"""Export a labelled dataset as Who&When-format JSON files, one per trajectory.

So built datasets can be fed to tools written for Who&When, and so an export →
import round trip checks that labels survive exactly. File names are the run id (a
hash): nothing in a name reveals the injected step or mode. An id that is not a plain
name (`../../x`, `a/b`: a dataset folder can come from anyone) is written under a slug
and hash of it, inside the output folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from whowhen.io import atomic_path, inside, safe_file_name, write_text


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
        out[safe_file_name(row["run_id"], ".json")] = {
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
        write_text(inside(out_dir, name), json.dumps(rec, indent=2, ensure_ascii=False))
        for name, rec in records.items()
    ]


HF_COLUMNS = (
    "run_id",
    "benchmark",
    "system",
    "modality",
    "task_id",
    "question",
    "gold_answer",
    "final_answer",
    "decisive_agent",
    "decisive_step",
    "mode",
    "category",
)


def to_hf_table(runs: pl.DataFrame, steps: pl.DataFrame, labels: pl.DataFrame) -> pl.DataFrame:
    """One row per labelled trajectory, its steps as a nested list: the shape the Hugging
    Face `datasets` library loads from Parquet. Only what an attributor may see plus the
    gold label: no origin, parent run or replacement action that would reveal the
    injection."""
    history = (
        steps.sort("run_id", "step")
        .group_by("run_id", maintain_order=True)
        .agg(
            pl.struct(
                "step", "actor", "role", "kind", "content", "tool", "tool_args", "media"
            ).alias("history")
        )
    )
    return (
        labels.join(runs, on="run_id", how="inner", suffix="_run")
        .join(history, on="run_id", how="left")
        .select(*HF_COLUMNS, "split", "history")
        .sort("run_id")
    )


def export_hf(
    runs: pl.DataFrame, steps: pl.DataFrame, labels: pl.DataFrame, out_dir: str | Path
) -> list[Path]:
    """`data/<split>.parquet` per split (`load_dataset("parquet", data_files=...)`)."""
    table = to_hf_table(runs, steps, labels)
    if table["split"].null_count() == table.height:  # unsplit (an import): one file
        table = table.with_columns(pl.lit("train").alias("split"))
    paths = []
    for split in sorted(set(table["split"].drop_nulls())):
        path = inside(Path(out_dir) / "data", safe_file_name(split, ".parquet"))
        with atomic_path(path) as tmp:
            table.filter(pl.col("split") == split).drop("split").write_parquet(
                tmp, statistics=False
            )
        paths.append(path)
    return paths
