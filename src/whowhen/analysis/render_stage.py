"""Snakemake edges of the analysis jobs that render pages from a finished run and draw no
figure: the trajectory viewer and the report notebooks. They live apart from
`whowhen.analysis.stage` so that these jobs do not load the plotting libraries (seaborn,
SciPy, matplotlib) the figures need: seconds of start-up per job."""

from __future__ import annotations

import logging
from typing import Any

import polars as pl

from whowhen.analysis.viewer import write_viewer
from whowhen.schema import LABELS, PREDICTIONS, RUNS, STEPS, read_table, read_tables

log = logging.getLogger("whowhen.analysis")


def viewer_stage(params: dict[str, Any], inputs: Any, outputs: Any, wildcards: Any) -> None:
    """One static page per labelled trajectory of every dataset, plus an index."""
    names = list(params["datasets"])
    labels = [read_table(p, LABELS) for p in inputs["labels"]]
    datasets = {
        run_id: name
        for name, frame in zip(names, labels, strict=True)
        for run_id in frame["run_id"]
    }
    pages = write_viewer(
        read_tables(list(inputs["runs"]), RUNS),
        read_tables(list(inputs["steps"]), STEPS),
        pl.concat(labels, how="vertical"),
        read_tables(list(inputs["predictions"]), PREDICTIONS),
        outputs["pages"],
        datasets=datasets,
    )
    log.info("viewer: %d trajectory pages in %s", len(pages) - 1, outputs["pages"])


def notebook_stage(params: dict[str, Any], inputs: Any, outputs: Any, wildcards: Any) -> None:
    """Execute one notebook of notebooks/ against this run's outputs; render it to HTML."""
    # deferred: nbclient and nbconvert are heavy and only the notebook stage needs them
    from whowhen.analysis.notebooks import render_notebook

    render_notebook(inputs["notebook"], outputs["html"], params.get("parameters", {}))
    log.info("notebook: %s -> %s", inputs["notebook"], outputs["html"])
