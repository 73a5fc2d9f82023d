"""`whowhen view DS -o DIR` and `whowhen runs DS`: look at any dataset folder (an import of
any format, or the pipeline's `results/dataset`), labelled or not.

`view` writes the pipeline's own trajectory pages (`whowhen.analysis.viewer`), so a page
reads the same whether the report links it or a user asked for it; `runs` is the table a
user greps for a run id to `show`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import polars as pl

from whowhen.cli.commands import _load, format_table, plural, prediction_files
from whowhen.errors import WhowhenError
from whowhen.schema import PREDICTIONS, empty, read_table

OUTCOME = {True: "success", False: "failure"}


def add_runs_parsers(sub: argparse._SubParsersAction) -> None:
    """`view` and `runs`."""
    p = sub.add_parser(
        "view", help="write a dataset's trajectory pages (HTML: gold step, predictions marked)"
    )
    p.add_argument("data", metavar="DS", help="dataset folder (runs/steps/labels.parquet)")
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="where the pages go")
    p.set_defaults(func=view_cmd)

    p = sub.add_parser("runs", help="list a dataset's runs: outcome, agents, steps, label")
    p.add_argument("data", metavar="DS", help="dataset folder (runs/steps/labels.parquet)")
    p.add_argument("--failed", action="store_true", help="only the runs that failed")
    p.set_defaults(func=runs_cmd)


def view_cmd(args: argparse.Namespace) -> int:
    # deferred: a subcommand loads only the code it runs (the viewer brings in PIL)
    from whowhen.analysis.viewer import write_viewer

    data = Path(args.data)
    tables = _load(data)
    predictions = _readable_predictions(data)
    try:
        pages = write_viewer(
            tables["runs"],
            tables["steps"],
            tables["labels"],
            predictions,
            args.out,
            media_root=_media_root(data),
        )
    except OSError as exc:
        raise WhowhenError(
            f"cannot write the pages ({exc.strerror or exc})", path=str(args.out)
        ) from None
    attributors = sorted(set(predictions["attributor"].to_list()))
    print(
        f"wrote {plural(len(pages) - 1, 'trajectory page')} ({tables['labels'].height} labelled; "
        f"predictions of {', '.join(attributors) or 'no attributor'}) -> {pages[-1]}"
    )
    return 0


def _readable_predictions(data: Path) -> pl.DataFrame:
    """Every predictions file of the dataset; one that cannot be read is one warning line,
    and the others are still shown."""
    frames = []
    for path in prediction_files(data):
        try:
            frames.append(read_table(path, PREDICTIONS))
        except WhowhenError as exc:
            print(f"warning: skipped {exc}", file=sys.stderr)
    if not frames:
        return empty(PREDICTIONS)
    return pl.concat(frames).unique(["run_id", "attributor"], keep="last", maintain_order=True)


def _media_root(data: Path) -> Path | None:
    """Where the steps' images are: WHOWHEN_MEDIA_DIR when set, else the pipeline's
    `results/media` beside `results/dataset`, else the default (`whowhen.media`)."""
    if os.environ.get("WHOWHEN_MEDIA_DIR"):
        return None
    beside = data.parent / "media"
    return beside if beside.is_dir() else None


def runs_table(tables: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """One row per run, sorted by run id: its outcome, its agents in order of first step
    (as the attributors count them: not the task, not tool output), its number of steps
    and its label as agent@step ('-' when it has none)."""
    # deferred: a subcommand loads only the code it runs (the attribution package)
    from whowhen.attribution.baselines import agent_steps

    steps = tables["steps"]
    agents = (
        agent_steps(steps)
        .group_by("run_id")
        .agg(pl.col("actor").unique(maintain_order=True).str.join(",").alias("agents"))
    )
    counts = steps.group_by("run_id").len("steps")
    labels = tables["labels"].select(
        "run_id",
        pl.format("{}@{}", "decisive_agent", "decisive_step").alias("label"),
    )
    return (
        tables["runs"]
        .select("run_id", pl.col("success").replace_strict(OUTCOME).alias("outcome"))
        .join(agents, on="run_id", how="left")
        .join(counts, on="run_id", how="left")
        .join(labels, on="run_id", how="left")
        .with_columns(
            pl.col("agents").fill_null("-"),
            pl.col("steps").fill_null(0),
            pl.col("label").fill_null("-"),
        )
        .sort("run_id")
    )


def runs_cmd(args: argparse.Namespace) -> int:
    tables = _load(args.data)
    table = runs_table(tables)
    failed = table.filter(pl.col("outcome") == "failure").height
    labelled = table.filter(pl.col("label") != "-").height
    if args.failed:
        table = table.filter(pl.col("outcome") == "failure")
    print(format_table(table))
    print(f"{plural(tables['runs'].height, 'run')}: {failed} failed, {labelled} labelled")
    return 0
