"""`whowhen score`: accuracy of every attributor's predictions on one dataset folder, with
its sample size and 95% intervals, beside the random baseline's expected accuracy.

Every labelled run counts for every attributor (a run it did not predict is wrong), so a
half-finished predictions file cannot look better than a complete one; `--covered-only`
scores the predicted runs alone and says so in the heading."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import polars as pl

from whowhen.cli.commands import _load, format_table
from whowhen.errors import WhowhenError
from whowhen.schema import PREDICTIONS, read_tables

SCORING_NOTE = {
    "exact": "exact match",
    "substring": "the official Who&When scorer: substring match, first word of the agent",
    "both": "exact; *_substring = the official Who&When scorer",
}

INTERVALS = ("agent_acc", "step_acc")
"""Shown with their Wilson 95% interval (the table's `<name>_lo` and `<name>_hi`)."""


def score_cmd(args: argparse.Namespace) -> int:
    # deferred: a subcommand loads only the code it runs (startup ~1 s, not ~4 s)
    from whowhen.analysis import accuracy, random_expected
    from whowhen.io import write_json

    tables = _load(args.data)
    if tables["labels"].is_empty():  # every table would be empty: say why instead
        raise WhowhenError(
            f"no labels to score against: `whowhen review export {args.data} -o sheet.csv` "
            "writes a sheet to label, `whowhen import ... --labels sheet.csv` joins it",
            path=str(Path(args.data) / "labels.parquet"),
        )
    predictions = _predictions(Path(args.data))
    acc = accuracy(tables["labels"], predictions, tables["runs"], args.tolerance, args.covered_only)
    expected = random_expected(tables["labels"], tables["runs"], tables["steps"])
    out = Path(args.json) if args.json else Path(args.data) / "scores.json"
    write_json(  # before printing: a reader that stops early (`| head`) still gets the file
        out,
        {
            "accuracy": acc.to_dicts(),
            "random_expected": expected.to_dicts(),
            "tolerance": args.tolerance,
            "covered_only": args.covered_only,
        },
    )
    for line in coverage_warnings(acc, predictions, args.covered_only):
        print(f"warning: {line}", file=sys.stderr)
    print(heading(args.scoring, args.covered_only))
    print(format_table(accuracy_view(acc, args.scoring, args.tolerance)))
    print("\nRandom baseline, expected accuracy (analytic)")
    print(format_table(rollup_rows(expected.filter(pl.col("split") == "all").drop("split"))))
    print(f"\nwrote {out}")
    return 0


def _predictions(data: Path) -> pl.DataFrame:
    pred_files = sorted((data / "predictions").glob("*.parquet"))
    if not pred_files:
        raise WhowhenError(
            "no predictions yet: run `whowhen attribute` first", path=str(data / "predictions")
        )
    return read_tables(pred_files, PREDICTIONS)


def heading(scoring: str, covered_only: bool) -> str:
    """The table's title: what was scored, so a covered-only table is never mistaken for
    a full one."""
    if covered_only:
        return (
            f"Attribution accuracy, COVERED RUNS ONLY ({SCORING_NOTE[scoring]}; [95% interval])\n"
            "only labelled runs with a prediction are scored; the `missing` ones are left out"
        )
    return (
        f"Attribution accuracy ({SCORING_NOTE[scoring]}; [95% interval])\n"
        "every labelled run counts: one without a prediction (`missing`) is scored wrong"
    )


def accuracy_view(acc: pl.DataFrame, scoring: str, tolerance: int) -> pl.DataFrame:
    """The split-'all' rows as printed: n, missing and unmatched counts, and accuracies
    (the exact agent and step ones with their 95% intervals), as text."""
    columns = ["attributor", "dataset", "n", "missing", "unmatched"]
    if scoring in ("exact", "both"):
        columns += ["agent_acc", "step_acc", "step_acc_pm1"]
        if tolerance > 1:
            columns.append("step_acc_pmk")
    if scoring in ("substring", "both"):
        columns += ["agent_acc_substring", "step_acc_substring"]
    rows = rollup_rows(acc.filter(pl.col("split") == "all"))
    shown = [{c: _cell(row, c) for c in columns} for row in rows.iter_rows(named=True)]
    return pl.DataFrame(shown, schema=dict.fromkeys(columns, pl.String)).rename(
        {"step_acc_pmk": f"step_acc_pm{tolerance}"}, strict=False
    )


def rollup_rows(frame: pl.DataFrame) -> pl.DataFrame:
    """Without the dataset 'all' roll-up when there is one dataset: it would repeat it."""
    datasets = frame.filter(pl.col("dataset") != "all")["dataset"].n_unique()
    return frame if datasets >= 2 else frame.filter(pl.col("dataset") != "all")


def _cell(row: dict[str, Any], column: str, digits: int = 3) -> str:
    """A value as printed: rates with `digits` decimals ('-' when n = 0), the
    `INTERVALS` ones followed by their interval, `0.333 [0.121, 0.646]`."""
    value = row[column]
    if not isinstance(value, float):
        return "-" if value is None else str(value)
    text = f"{value:.{digits}f}"
    if column in INTERVALS:
        text += f" [{row[f'{column}_lo']:.{digits}f}, {row[f'{column}_hi']:.{digits}f}]"
    return text


def coverage_warnings(
    acc: pl.DataFrame, predictions: pl.DataFrame, covered_only: bool
) -> list[str]:
    """One line per attributor whose predictions do not line up with the labels: some or
    all of its rows name no labelled run, or some labelled runs have no row."""
    totals = acc.filter((pl.col("dataset") == "all") & (pl.col("split") == "all"))
    fate = "left out (--covered-only)" if covered_only else "scored wrong"
    out = []
    for name, rows in sorted(predictions.group_by("attributor").len().rows()):
        row = totals.filter(pl.col("attributor") == name)
        unmatched = int(row["unmatched"][0]) if row.height else rows
        missing = int(row["missing"][0]) if row.height else 0
        if unmatched == rows:
            out.append(
                f"{name}: none of its {rows} predictions matches a labelled run "
                f"({missing} labelled runs {fate})"
            )
            continue
        if unmatched:
            out.append(f"{name}: {unmatched} of its {rows} predictions match no labelled run")
        if missing:
            out.append(f"{name}: {missing} labelled runs have no prediction, {fate}")
    return out
