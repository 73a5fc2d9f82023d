"""The report's section on imported (real) datasets: every attributor's exact step and agent
accuracy with Wilson 95% intervals, beside the uniform random baseline's analytic
expectation on the same items. This is where what was learned on built data meets real
failures, so each dataset gets its own table and nothing is pooled with built items."""

from __future__ import annotations

import html

import polars as pl

from whowhen.analysis.html import table_html
from whowhen.analysis.items import dataset_name
from whowhen.analysis.report import with_interval

RANDOM_ROW = "random (analytic expectation)"


def answering(predictions: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """(attributor, dataset) pairs with at least one usable prediction: the shortcut
    predictors (fitted on a train split an import lacks) and the replay oracle (built runs
    only) answer nothing on an import, and a row of zeros would read as a result."""
    named = runs.select(
        "run_id",
        dataset_name(),
    )
    return (
        predictions.filter(pl.col("parse_ok"))
        .join(named, on="run_id")
        .select("attributor", "dataset")
        .unique()
    )


def imported_table(
    accuracy: pl.DataFrame,
    expected: pl.DataFrame,
    dataset: str,
    answered: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One imported dataset: a row per attributor (those in `answered`, when given), then
    random's expectation."""
    rows = accuracy.filter((pl.col("dataset") == dataset) & (pl.col("split") == "all"))
    if answered is not None:
        rows = rows.join(answered, on=["attributor", "dataset"], how="semi")
    rows = rows.sort("attributor").select(
        "attributor",
        "n",
        with_interval("step_acc"),
        with_interval("agent_acc"),
    )
    chance = expected.filter((pl.col("dataset") == dataset) & (pl.col("split") == "all"))
    random_row = chance.select(
        pl.lit(RANDOM_ROW).alias("attributor"),
        pl.col("n"),
        pl.col("expected_step_acc")
        .map_elements(lambda v: f"{v:.3f}", return_dtype=pl.String)
        .alias("step_acc"),
        pl.col("expected_agent_acc")
        .map_elements(lambda v: f"{v:.3f}", return_dtype=pl.String)
        .alias("agent_acc"),
    )
    return pl.concat([rows, random_row.cast(rows.schema)])


def imported_html(
    accuracy: pl.DataFrame,
    expected: pl.DataFrame,
    built_benchmarks: list[str],
    answered: pl.DataFrame | None = None,
    trained_on: dict[str, int] | None = None,
    transfer: tuple[pl.DataFrame, pl.DataFrame] | None = None,
) -> list[str]:
    """A table per imported dataset (none imported: no section); `answered` (see
    `answering`) leaves out the attributors that predicted nothing there; `trained_on`
    (the tracer model's datasets and label counts) says what tracer-lite learned from;
    `transfer` is the built-versus-real (shapes, feature lifts) pair of `transfer`."""
    names = sorted(
        d
        for d in set(accuracy["dataset"])
        if d != "all" and d.split("/")[0] not in built_benchmarks
    )
    if not names:
        return []
    parts = [
        "<h2>Imported datasets: attribution on real failures</h2>",
        "<p class='note'>Every attributor on each imported dataset, all its labelled runs "
        "(a missing prediction counts as wrong). Brackets: Wilson 95% intervals. The last "
        "row is the uniform random baseline's analytic expectation over the same candidate "
        f"steps. {html.escape(fitted_on(trained_on or {}))} Attributors that cannot predict "
        "here (the shortcut predictors, fitted on a train split an import lacks; the replay "
        "oracle, built runs only) are not listed.</p>",
    ]
    for name in names:
        parts += [
            f"<h3>{html.escape(name)}</h3>",
            table_html(imported_table(accuracy, expected, name, answered)),
        ]
    if transfer is not None:
        shapes, lifts = transfer
        parts += [
            "<h3>Built versus real</h3>",
            "<p class='note'>How the runs tracer-lite learns from (the built train split) "
            "differ from each imported dataset: agent steps per run, characters per agent "
            "step, the share of steps by tool output and other non-agent speakers, the gold "
            "step's mean relative position among the agent steps, and how often it is its "
            "agent's first step.</p>",
            table_html(shapes),
            "<p class='note'>Each feature's lift: its mean at the gold step minus its mean "
            "at the run's other agent steps (features of `tracer_features`; a long run's "
            "copies are left out). <code>same_sign</code>: the cue points the same way in "
            "every imported dataset as in the built data, so weights learned on one can "
            "carry to the other.</p>",
            table_html(lifts),
        ]
    return parts


def fitted_on(trained_on: dict[str, int]) -> str:
    """What the report says tracer-lite learned from."""
    if not trained_on:
        return "tracer_lite was fitted on the built train split only."
    parts = ", ".join(f"{name} ({n} labelled runs)" for name, n in trained_on.items())
    imported = [n for n, k in trained_on.items() if n != "built" and k]  # an absent import: 0
    said = f"tracer_lite learned from {parts}; tracer_lite_built from the built train split alone."
    if imported:
        said += (
            f" On {', '.join(imported)} each run is predicted out of fold (by a model "
            "fitted without its task's labels), so no row scores the model on labels it saw."
        )
    return said
