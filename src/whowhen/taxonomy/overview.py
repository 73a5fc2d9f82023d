"""Natural-failure summaries: rollouts and failures per pair, the modes of the decisive
errors, and how replay and the offline classifier agree with the slip log."""

from __future__ import annotations

import polars as pl

from whowhen.schema import SLIPS, empty


def failure_overview(runs: pl.DataFrame, slips: pl.DataFrame | None = None) -> pl.DataFrame:
    """Rollouts and natural failures per (benchmark, system), with the slip model's log:
    how many slips, in how many runs, and how many slipped runs still succeeded."""
    slips = slips if slips is not None else empty(SLIPS)
    per_run = slips.group_by("run_id").agg(pl.len().cast(pl.Int64).alias("slips"))
    return (
        runs.join(per_run, on="run_id", how="left")
        .with_columns(pl.col("slips").fill_null(0))
        .group_by("benchmark", "system")
        .agg(
            pl.col("modality").first(),
            pl.col("category").first(),
            pl.len().cast(pl.Int64).alias("n_runs"),
            (~pl.col("success")).sum().cast(pl.Int64).alias("n_failed"),
            pl.col("slips").sum().cast(pl.Int64).alias("n_slips"),
            (pl.col("slips") > 0).sum().cast(pl.Int64).alias("n_slipped_runs"),
            ((pl.col("slips") > 0) & pl.col("success")).sum().cast(pl.Int64).alias("n_recovered"),
        )
        .with_columns((pl.col("n_failed") / pl.col("n_runs")).alias("failure_rate"))
        .sort("benchmark", "system")
    )


def mode_overview(modes: pl.DataFrame, runs: pl.DataFrame, source: str = "replay") -> pl.DataFrame:
    """Counts and shares of modes among natural failures, per (benchmark, system).

    `modes` has one row per failure (run_id, mode): the replay stage's classification,
    or an LLM annotator's."""
    joined = modes.filter(pl.col("mode").is_not_null()).join(
        runs.select("run_id", "benchmark", "system"), on="run_id"
    )
    return (
        joined.group_by("benchmark", "system", "mode")
        .agg(pl.len().cast(pl.Int64).alias("count"))
        .with_columns(
            (pl.col("count") / pl.col("count").sum().over("benchmark", "system")).alias("share"),
            pl.lit(source).alias("source"),
        )
        .sort("benchmark", "system", "mode")
    )


def replay_check(decisive: pl.DataFrame, slips: pl.DataFrame, probes: pl.DataFrame) -> pl.DataFrame:
    """Per pair and overall (`all`): replay statuses, and of the failures with exactly one
    logged slip, how many have that slip's step as the decisive step."""
    one = (
        slips.group_by("run_id")
        .agg(pl.len().alias("n"), pl.col("step").first().alias("slip_step"))
        .filter(pl.col("n") == 1)
    )
    n_probes = probes.group_by("run_id").agg(pl.len().cast(pl.Int64).alias("probes"))
    frame = (
        decisive.join(one, on="run_id", how="left")
        .join(n_probes, on="run_id", how="left")
        .with_columns(pl.col("probes").fill_null(0))
    )
    both = pl.concat(
        [frame, frame.with_columns(pl.lit("all").alias("benchmark"), pl.lit("all").alias("system"))]
    )
    return (
        both.group_by("benchmark", "system")
        .agg(
            pl.len().cast(pl.Int64).alias("n_failed"),
            (pl.col("status") == "decisive").sum().cast(pl.Int64).alias("n_decisive"),
            (pl.col("status") == "no_single_decisive_step")
            .sum()
            .cast(pl.Int64)
            .alias("n_no_single"),
            (pl.col("status") == "fidelity_error").sum().cast(pl.Int64).alias("n_fidelity_error"),
            pl.col("slip_step").is_not_null().sum().cast(pl.Int64).alias("n_one_slip"),
            (pl.col("slip_step") == pl.col("decisive_step"))
            .fill_null(False)
            .sum()
            .cast(pl.Int64)
            .alias("n_one_slip_found"),
            pl.col("probes").sum().cast(pl.Int64),
        )
        .with_columns(
            (pl.col("n_one_slip_found") / pl.col("n_one_slip")).alias("one_slip_found_rate")
        )
        .sort(pl.col("benchmark") == "all", "benchmark", "system")
    )


def agreement(decisive: pl.DataFrame, slips: pl.DataFrame) -> pl.DataFrame:
    """The offline classifier's mode against the mode of the slip logged at the decisive
    step, per category of the slip's mode (and `all`)."""
    logged = slips.select(
        "run_id", pl.col("step").alias("decisive_step"), pl.col("mode").alias("slip_mode")
    )
    frame = (
        decisive.filter(pl.col("status") == "decisive")
        .join(logged, on=["run_id", "decisive_step"])
        .with_columns(pl.col("slip_mode").str.split(".").list.first().alias("category"))
    )
    both = pl.concat(
        [
            frame.select("category", "slip_mode", "mode"),
            frame.select(pl.lit("all").alias("category"), "slip_mode", "mode"),
        ]
    )
    return (
        both.group_by("category")
        .agg(
            pl.len().cast(pl.Int64).alias("n"),
            (pl.col("mode") == pl.col("slip_mode"))
            .fill_null(False)
            .sum()
            .cast(pl.Int64)
            .alias("agree"),
        )
        .with_columns((pl.col("agree") / pl.col("n")).alias("rate"))
        .sort(pl.col("category") == "all", "category")
    )
