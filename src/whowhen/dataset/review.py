"""Human validation of labels: a stratified sample exported as a review sheet (CSV), and
filled sheets read back into agreement figures.

A reviewer reads the trajectory, where the labelled step is marked, and answers in the
`verdict` column whether that step is the decisive error (yes / no / unsure). With two
or more sheets over the same items, Cohen's kappa between the first two reviewers is
reported too.
"""

from __future__ import annotations

import csv
import random
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl

from whowhen.errors import WhowhenError, preview
from whowhen.io import atomic_path, csv_table, sheet_cell, sheet_value

VERDICTS = ("yes", "no", "unsure")
SHEET_COLUMNS = (
    "item_id",
    "benchmark",
    "system",
    "mode",
    "labelled_agent",
    "labelled_step",
    "question",
    "trajectory",
    "verdict",
    "reviewer",
    "notes",
)


def sample_items(labels: pl.DataFrame, runs: pl.DataFrame, n: int, seed: int) -> pl.DataFrame:
    """About `n` items stratified by (benchmark, mode): every stratum gets at least one,
    the rest in proportion to its size; seeded, so the same sheet comes out again."""
    items = labels.join(runs.select("run_id", "benchmark", "system", "question"), on="run_id")
    strata = items.group_by("benchmark", "mode").len().sort("benchmark", "mode")
    total = max(1, items.height)
    rng = random.Random(seed)
    chosen: list[str] = []
    for bench, mode, size in strata.iter_rows():
        quota = max(1, round(n * size / total))
        ids = sorted(
            items.filter((pl.col("benchmark") == bench) & pl.col("mode").eq_missing(pl.lit(mode)))[
                "run_id"
            ]
        )
        chosen += rng.sample(ids, min(quota, len(ids)))
    return items.filter(pl.col("run_id").is_in(chosen)).sort("benchmark", "mode", "run_id")


def _trajectory(steps: pl.DataFrame, marked: int | None) -> str:
    lines = []
    for s in steps.sort("step").iter_rows(named=True):
        call = f" -> {s['tool']}({s['tool_args'] or ''})" if s["tool"] else ""
        mark = ">> " if s["step"] == marked else "   "
        lines.append(f"{mark}[{s['step']}] {s['actor']}: {s['content']}{call}")
    return "\n".join(lines)


def unlabelled_items(labels: pl.DataFrame, runs: pl.DataFrame, n: int, seed: int) -> pl.DataFrame:
    """About `n` runs that have no label (imported traces, eval logs), seeded, as items with
    blank label columns: the reviewer fills in `labelled_agent` and `labelled_step`, and
    `whowhen import ... --labels SHEET.csv` reads the filled sheet back."""
    todo = runs.filter(~pl.col("run_id").is_in(labels["run_id"].to_list()))
    ids = sorted(todo["run_id"])
    chosen = random.Random(seed).sample(ids, min(n, len(ids)))
    return (
        todo.filter(pl.col("run_id").is_in(chosen))
        .select("run_id", "benchmark", "system", "question")
        .with_columns(
            pl.lit(None, pl.String).alias("mode"),
            pl.lit(None, pl.String).alias("decisive_agent"),
            pl.lit(None, pl.Int64).alias("decisive_step"),
        )
        .sort("benchmark", "run_id")
    )


def export_sheet(
    labels: pl.DataFrame,
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    path: str | Path,
    n: int = 60,
    seed: int = 0,
    unlabelled: bool = False,
) -> int:
    """Write the review sheet; returns the number of items. `unlabelled`: a sheet of runs
    without a label, for reviewers to label (`unlabelled_items`)."""
    if unlabelled:
        items = unlabelled_items(labels, runs, n, seed)
    else:
        items = sample_items(labels, runs, n, seed)
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as handle:
        writer = csv.DictWriter(handle, SHEET_COLUMNS)
        writer.writeheader()
        for row in items.iter_rows(named=True):
            cells = {
                "item_id": row["run_id"],
                "benchmark": row["benchmark"],
                "system": row["system"],
                "mode": row["mode"],
                "labelled_agent": row["decisive_agent"],
                "labelled_step": row["decisive_step"],
                "question": row["question"],
                "trajectory": _trajectory(
                    steps.filter(pl.col("run_id") == row["run_id"]), row["decisive_step"]
                ),
                "verdict": "",
                "reviewer": "",
                "notes": "",
            }
            writer.writerow({k: sheet_cell(v) for k, v in cells.items()})
    return items.height


def read_sheet(path: str | Path) -> list[dict[str, str]]:
    """A filled sheet's rows, each cell as written before the sheet kept it from reading
    as a formula; a missing column or an unknown verdict names file, row, field."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise WhowhenError(f"cannot read ({exc.strerror or exc})", path=str(path)) from None
    header, sheet = csv_table(data, str(path))
    missing = {"item_id", "mode", "verdict"} - set(header)
    if missing:
        raise WhowhenError(f"missing columns {sorted(missing)}", path=str(path))
    rows = []
    for i, raw in enumerate(sheet, start=2):
        row = {k: sheet_value(v) if isinstance(v, str) else v for k, v in raw.items()}
        verdict = (row.get("verdict") or "").strip().lower()
        if verdict not in VERDICTS:
            raise WhowhenError(
                f"verdict {preview(row.get('verdict'))} is not one of {', '.join(VERDICTS)}",
                path=str(path),
                record=f"row {i}",
                field="verdict",
            )
        rows.append({**row, "verdict": verdict, "reviewer": row.get("reviewer") or path.stem})
    return rows


def cohen_kappa(a: list[str], b: list[str]) -> float | None:
    """Agreement of two raters beyond chance (None when chance agreement is total)."""
    if not a:
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / len(a)
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in set(ca) | set(cb)) / len(a) ** 2
    return None if expected == 1 else (observed - expected) / (1 - expected)


def agreement(sheets: list[list[dict[str, str]]]) -> dict[str, Any]:
    """Confirmation rate per mode and overall, and inter-reviewer kappa where it applies."""
    rows = [r for sheet in sheets for r in sheet]
    by_mode: dict[str, Counter[str]] = {}
    for r in rows:
        by_mode.setdefault(r["mode"], Counter())[r["verdict"]] += 1

    def rate(c: Counter[str]) -> dict[str, Any]:
        decided = c["yes"] + c["no"]
        return {**{v: c[v] for v in VERDICTS}, "confirmed": c["yes"] / decided if decided else None}

    out: dict[str, Any] = {
        "items": len({r["item_id"] for r in rows}),
        "reviews": len(rows),
        "overall": rate(Counter(r["verdict"] for r in rows)),
        "by_mode": {m: rate(c) for m, c in sorted(by_mode.items())},
    }
    if len(sheets) >= 2:
        first = {r["item_id"]: r["verdict"] for r in sheets[0]}
        second = {r["item_id"]: r["verdict"] for r in sheets[1]}
        common = sorted(set(first) & set(second))
        out["kappa"] = cohen_kappa([first[i] for i in common], [second[i] for i in common])
        out["kappa_items"] = len(common)
    return out
