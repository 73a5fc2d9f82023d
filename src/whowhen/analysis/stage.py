"""Snakemake edge of the analysis stage: scores, metrics.json, tables, figures, report.

Every aggregate comes from a SQL file run by DuckDB (`scores.run_sql`); this module only
reads the stage's inputs, calls the pure table and figure functions, and writes files.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import polars as pl

from whowhen.analysis import dataset_figures as dsf
from whowhen.analysis.attribution_figures import FIGURES as ATTRIBUTION_FIGURES
from whowhen.analysis.attribution_tables import attribution_tables, attributor_table
from whowhen.analysis.attributor_info import attributor_info_from_config
from whowhen.analysis.breakdowns import DEFAULT_BY, attribution_metrics
from whowhen.analysis.feedback_analysis import FIGURES as FEEDBACK_FIGURES
from whowhen.analysis.feedback_analysis import feedback_html, feedback_tables
from whowhen.analysis.figures import accuracy_figure, modes_figure
from whowhen.analysis.frameworks import frameworks_html, frameworks_table
from whowhen.analysis.imported import answering, imported_html
from whowhen.analysis.infra import infra_html, infra_table
from whowhen.analysis.items import scored_items
from whowhen.analysis.outputs import FIGURES, TABLES
from whowhen.analysis.played import played_html, played_table
from whowhen.analysis.report import (
    built_dataset_html,
    figures_html,
    learned_html,
    metrics_html,
    natural_failures_html,
    render_report,
    trajectories_html,
)
from whowhen.analysis.scores import (
    accuracy,
    composition,
    funnel,
    metrics,
    random_expected,
    recovery_by_mode,
    rerollout_drift,
    timing,
)
from whowhen.analysis.transfer import lift_table, run_shapes
from whowhen.defaults import filled
from whowhen.io import atomic_path, write_json, write_text
from whowhen.schema import (
    AGREEMENT,
    CANDIDATES,
    CONTINUATIONS,
    FEEDBACK,
    LABELS,
    LIFTS,
    MODE_OVERVIEW,
    OVERVIEW,
    PREDICTIONS,
    REPLAY_CHECK,
    RUNS,
    STEPS,
    read_table,
    read_tables,
)

log = logging.getLogger("whowhen.analysis")


def dataset_tables(
    labels: pl.DataFrame,
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    continuations: pl.DataFrame,
) -> dict[str, pl.DataFrame]:
    """The benchmark's own tables: Table 1, lengths, and how the built labels were made."""
    return {
        "dataset_stats": dsf.dataset_stats(labels, runs, steps),
        "length_distribution": dsf.length_distribution(labels, runs, steps),
        "funnel": funnel(continuations),
        "recovery": recovery_by_mode(continuations),
        "drift": rerollout_drift(continuations),
    }


DATASET_FIGURES = {
    "dataset_stats": dsf.dataset_stats_figure,
    "length_distribution": dsf.length_distribution_figure,
    "funnel": dsf.funnel_figure,
    "recovery": dsf.recovery_figure,
    "drift": dsf.drift_figure,
}


def write_parquet(frame: pl.DataFrame, path: str) -> None:
    with atomic_path(path) as tmp:
        frame.write_parquet(tmp, compression="zstd", statistics=False)


def dvc_plots(cost: pl.DataFrame, split: str) -> tuple[str, str]:
    """The two data-series plots DVC renders (`dvc plots show`): step accuracy per
    attributor (bars) and cost against step accuracy (scatter), one split."""
    rows = cost.filter(pl.col("split") == split).sort("attributor")
    bars = rows.select("attributor", "step_acc", "step_acc_lo", "step_acc_hi", "n")
    scatter = rows.select("attributor", "cost_per_traj", "step_acc", "protocol", "family")
    return bars.write_csv(float_precision=6), scatter.write_csv(float_precision=6)


def write_scores(
    outputs: Any,
    summary: dict[str, Any],
    acc: pl.DataFrame,
    fun: pl.DataFrame,
    expected: pl.DataFrame,
) -> None:
    """metrics.json (the DVC metrics) and the accuracy, funnel and random-baseline CSVs."""
    write_json(outputs["metrics"], summary)
    write_text(outputs["accuracy"], acc.write_csv(float_precision=6))
    write_text(outputs["funnel"], fun.write_csv(float_precision=6))
    write_text(outputs["expected"], expected.write_csv(float_precision=6))


def breakdown_metrics(
    params: dict[str, Any],
    labels: pl.DataFrame,
    predictions: pl.DataFrame,
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    info: dict[str, dict[str, str]],
) -> pl.DataFrame:
    """attribution_metrics.csv: every default breakdown, 1000 resamples, the config's seed."""
    return attribution_metrics(
        labels,
        predictions,
        runs,
        steps,
        by=DEFAULT_BY,
        n_boot=1000,
        seed=params["attribution"]["seed"],
        attributor_info=info,
    )


def write_tables(outputs: Any, tables: dict[str, pl.DataFrame], split: str) -> None:
    """Every table as Parquet (the notebooks read them), and the DVC plots' data series."""
    for name in TABLES:
        write_parquet(tables[name], outputs[f"table_{name}"])
    bars, scatter = dvc_plots(tables["cost_performance"], split)
    write_text(outputs["plot_accuracy"], bars)
    write_text(outputs["plot_cost"], scatter)


def draw_figures(
    tables: dict[str, pl.DataFrame], acc: pl.DataFrame, figure: dict[str, str], split: str
) -> None:
    """Every figure drawn from its table, except the modes heatmap (its own input)."""
    for name, draw in DATASET_FIGURES.items():
        draw(tables[name], figure[name])
    for name, draw in ATTRIBUTION_FIGURES.items():
        draw(tables[name], figure[name], split=split)
    for name, draw in FEEDBACK_FIGURES.items():
        draw(tables[name], figure[name])
    accuracy_figure(acc, figure["accuracy"])


def natural_section(
    inputs: Any, overview: pl.DataFrame, modes: pl.DataFrame, modes_png: str
) -> list[str]:
    """The natural-failure section, with the replay, classifier and candidate tables."""
    return natural_failures_html(
        overview,
        modes,
        modes_png,
        read_table(inputs["replay_check"], REPLAY_CHECK),
        read_table(inputs["agreement"], AGREEMENT),
        read_table(inputs["candidates"], CANDIDATES),
    )


def built_section(
    built_labels: pl.DataFrame,
    built_runs: pl.DataFrame,
    tables: dict[str, pl.DataFrame],
    predictions: pl.DataFrame,
    tolerance: int,
    leakage: pl.DataFrame | None = None,
) -> list[str]:
    """The built dataset's audit; its shortcut scores are over its test split only."""
    return built_dataset_html(
        composition(built_labels, built_runs),
        tables["drift"],
        tables["recovery"],
        accuracy(
            built_labels.filter(pl.col("split") == "test"), predictions, built_runs, tolerance
        ),
        leakage,
    )


def _trained_on(model_path: str | None) -> dict[str, int]:
    """The datasets (and their labelled runs) the pipeline's tracer model learned from."""
    if not model_path:
        return {}
    return dict(json.loads(Path(model_path).read_text()).get("trained_on", {}))


def config_summary(params: dict[str, Any]) -> str:
    """The report's first line: what this run covered."""
    return (
        f"datasets: {', '.join(params['datasets'])}; systems: "
        f"{', '.join(params['systems'])}; attributors: {', '.join(params['attributors'])}"
    )


def stage(params: dict[str, Any], inputs: Any, outputs: Any, wildcards: Any) -> None:
    """Score every dataset (built and imported) with every attributor; draw and report."""
    labels = read_tables(list(inputs["labels"]), LABELS)
    runs = read_tables(list(inputs["runs"]), RUNS)
    steps = read_tables(list(inputs["steps"]), STEPS)
    predictions = read_tables(list(inputs["predictions"]), PREDICTIONS)
    continuations = read_table(inputs["continuations"], CONTINUATIONS)
    overview = read_table(inputs["overview"], OVERVIEW)
    tolerance = params["analysis"]["tolerance"]
    split = params["analysis"]["figure_split"]
    acc = stage_accuracy(labels, predictions, runs, tolerance, params["attribution"])
    built_runs = read_table(inputs["runs"][0], RUNS)  # the built dataset comes first
    built_labels = read_table(inputs["labels"][0], LABELS)
    fun = funnel(continuations)
    expected = random_expected(labels, runs, steps)
    summary = metrics(acc, fun, labels, runs, expected)
    write_scores(outputs, summary, acc, fun, expected)
    info = attributor_info_from_config(
        params["attribution"], params["models"], params["llm"]["prices"]
    )
    breakdown = breakdown_metrics(params, labels, predictions, runs, steps, info)
    write_text(outputs["breakdown"], breakdown.write_csv(float_precision=6))
    write_text(outputs["timing"], timing(predictions).write_csv(float_precision=6))

    log.info("tables: %d SQL queries over %d labelled trajectories", len(TABLES), labels.height)
    items = scored_items(labels, predictions, runs, steps, info)
    names = sorted(set(predictions["attributor"]))
    tables = dataset_tables(labels, runs, steps, continuations)  # every dataset's items
    tables |= attribution_tables(items, attributor_table(names, info), max_k=tolerance)
    # the feedback loop's reruns: no shard configured -> empty tables, "no data" figures
    tables |= feedback_tables(read_tables(list(inputs.get("feedback", [])), FEEDBACK))
    write_tables(outputs, tables, split)

    rollouts = read_tables(list(inputs.get("rollouts", [])), RUNS)
    frameworks = frameworks_table(rollouts, continuations)
    write_text(outputs["frameworks"], frameworks.write_csv(float_precision=6))
    infra = infra_table(
        read_tables(list(inputs.get("infra", [])), RUNS),
        continuations,
        read_tables(list(inputs.get("feedback", [])), FEEDBACK),
    )
    write_text(outputs["infra"], infra.write_csv())

    log.info("figures: %d", len(FIGURES))
    figure = {name: outputs[f"figure_{name}"] for name in FIGURES}
    draw_figures(tables, acc, figure, split)
    modes = read_table(inputs["mode_overview"], MODE_OVERVIEW)
    modes_figure(modes, figure["modes"])

    natural = natural_section(inputs, overview, modes, figure["modes"])
    built_benchmarks = sorted(set(built_runs["benchmark"]))
    leakage = pl.read_csv(inputs["audit"]) if inputs.get("audit") else None
    built = built_section(built_labels, built_runs, tables, predictions, tolerance, leakage)
    body = (
        figures_html(figure, tables["dataset_stats"], split, part="dataset")
        + built
        + figures_html(figure, tables["cost_performance"], split, part="attribution")
        + learned_html(acc, built_benchmarks)
        + imported_html(
            acc,
            expected,
            built_benchmarks,
            answering(predictions, runs),
            _trained_on(inputs.get("tracer_model")),
            (
                run_shapes(runs, steps, labels, built_benchmarks),
                lift_table(read_table(inputs["lifts"], LIFTS)),
            ),
        )
        + metrics_html(breakdown, split=split)
        + [feedback_html(tables, figure)]
        + played_html(played_table(rollouts))
        + frameworks_html(frameworks)
        + infra_html(infra)
        + trajectories_html(items, runs, split)
    )
    report = render_report(
        summary, acc, fun, expected, figure["accuracy"], natural, config_summary(params), body
    )
    write_text(outputs["report"], report)


def stage_accuracy(
    labels: pl.DataFrame,
    predictions: pl.DataFrame,
    runs: pl.DataFrame,
    tolerance: int,
    attribution: dict[str, Any],
) -> pl.DataFrame:
    """`accuracy`, a missing prediction scored wrong, except for LLM attributors run on a
    sample (`attribution.llm_sample`): they are scored on the runs they were asked about,
    and their `n` says how many. `attribution` is filled from the config schema's defaults."""
    attribution = filled("attribution", attribution)
    sampled = [i["name"] for i in attribution["llm"]] if attribution["llm_sample"] else []
    is_sampled = pl.col("attributor").is_in(sampled)
    full = accuracy(labels, predictions.filter(~is_sampled), runs, tolerance)
    part = predictions.filter(is_sampled)
    if part.is_empty():
        return full
    covered = accuracy(labels, part, runs, tolerance, covered_only=True)
    return pl.concat([full, covered]).sort("attributor", "dataset", "split")
