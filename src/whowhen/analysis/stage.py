"""Snakemake edge of the analysis stage: scores, metrics.json, figure and report."""

from __future__ import annotations

from typing import Any

import polars as pl

from whowhen.analysis.breakdowns import (
    DEFAULT_BY,
    attribution_metrics,
    attributor_info_from_config,
    metrics_html,
)
from whowhen.analysis.figures import accuracy_figure, modes_figure
from whowhen.analysis.report import (
    built_dataset_html,
    learned_html,
    natural_failures_html,
    render_report,
)
from whowhen.analysis.scores import (
    accuracy,
    composition,
    funnel,
    metrics,
    random_expected,
    recovery_by_mode,
    rerollout_drift,
)
from whowhen.io import write_json, write_text
from whowhen.schema import (
    AGREEMENT,
    CANDIDATES,
    CONTINUATIONS,
    LABELS,
    MODE_OVERVIEW,
    OVERVIEW,
    PREDICTIONS,
    REPLAY_CHECK,
    RUNS,
    STEPS,
    read_table,
    read_tables,
)


def stage(params: dict[str, Any], inputs: Any, outputs: Any, wildcards: Any) -> None:
    """Score every dataset (built and imported) with every attributor."""
    labels = read_tables(list(inputs["labels"]), LABELS)
    runs = read_tables(list(inputs["runs"]), RUNS)
    steps = read_tables(list(inputs["steps"]), STEPS)
    predictions = read_tables(list(inputs["predictions"]), PREDICTIONS)
    continuations = read_table(inputs["continuations"], CONTINUATIONS)
    overview = read_table(inputs["overview"], OVERVIEW)
    acc = accuracy(labels, predictions, runs, params["analysis"]["tolerance"])
    built_runs = read_table(inputs["runs"][0], RUNS)  # the built dataset comes first
    built_labels = read_table(inputs["labels"][0], LABELS)
    fun = funnel(continuations)
    expected = random_expected(labels, runs, steps)
    summary = metrics(acc, fun, labels, runs, expected)
    write_json(outputs["metrics"], summary)
    write_text(outputs["accuracy"], acc.write_csv(float_precision=6))
    write_text(outputs["funnel"], fun.write_csv(float_precision=6))
    write_text(outputs["expected"], expected.write_csv(float_precision=6))
    breakdown = attribution_metrics(
        labels,
        predictions,
        runs,
        steps,
        by=DEFAULT_BY,
        n_boot=1000,
        seed=params["attribution"]["seed"],
        attributor_info=attributor_info_from_config(
            params["attribution"], params.get("models"), params["llm"].get("prices")
        ),
    )
    write_text(outputs["breakdown"], breakdown.write_csv(float_precision=6))
    accuracy_figure(acc, outputs["figure"])
    modes = read_table(inputs["mode_overview"], MODE_OVERVIEW)
    modes_figure(modes, outputs["modes_figure"])
    natural = natural_failures_html(
        overview,
        modes,
        outputs["modes_figure"],
        read_table(inputs["replay_check"], REPLAY_CHECK),
        read_table(inputs["agreement"], AGREEMENT),
        read_table(inputs["candidates"], CANDIDATES),
    )
    write_text(
        outputs["report"],
        render_report(
            summary,
            acc,
            fun,
            expected,
            outputs["figure"],
            natural,
            f"datasets: {', '.join(params['datasets'])}; systems: "
            f"{', '.join(params['systems'])}; attributors: {', '.join(params['attributors'])}",
            built_dataset_html(
                composition(built_labels, built_runs),
                rerollout_drift(continuations),
                recovery_by_mode(continuations),
                accuracy(
                    built_labels.filter(pl.col("split") == "test"),
                    predictions,
                    built_runs,
                    params["analysis"]["tolerance"],
                ),
            )
            + learned_html(acc, sorted(set(built_runs["benchmark"])))
            + metrics_html(breakdown, split="test"),
        ),
    )
