"""The real agent frameworks' runs, one row per (framework system, benchmark): how often
the framework solved the tasks, how many agent steps and model calls a run took, its
cost, and how its injections' warm starts went through the model gateway (prefix
fidelity, the first drift's reason, calls answered from the recording vs asked live)."""

from __future__ import annotations

import html

import polars as pl

from whowhen.analysis.html import table_html
from whowhen.registry import framework_systems

COLUMNS = {
    "framework": pl.String,
    "system": pl.String,
    "benchmark": pl.String,
    "runs": pl.Int64,
    "success_rate": pl.Float64,
    "agent_steps_per_run": pl.Float64,
    "model_calls": pl.Int64,
    "cost_usd": pl.Float64,
    "warm_starts": pl.Int64,
    "prefix_exact": pl.Float64,
    "drifted": pl.Int64,
    "first_drift": pl.String,
    "calls_replayed": pl.Int64,
    "calls_live": pl.Int64,
    "flipped": pl.Int64,
}
"""The table's columns (empty when no framework system ran)."""


def frameworks_table(runs: pl.DataFrame, continuations: pl.DataFrame) -> pl.DataFrame:
    """One row per (framework system, benchmark) from the rollouts' runs and the
    continuations records; an empty table of COLUMNS when no framework system ran."""
    systems = list(framework_systems())
    rolled = runs.filter(pl.col("system").is_in(systems) & (pl.col("origin") == "rollout"))
    if rolled.is_empty():
        return pl.DataFrame(schema=COLUMNS)
    meta = pl.col("meta").str.json_path_match
    rollouts = rolled.group_by("system", "benchmark").agg(
        pl.col("policy").first().str.split("/").list.first().alias("framework"),
        pl.len().cast(pl.Int64).alias("runs"),
        pl.col("success").mean().round(3).alias("success_rate"),
        meta("$.agent_steps").cast(pl.Int64).mean().round(1).alias("agent_steps_per_run"),
        meta("$.calls").cast(pl.Int64).sum().alias("model_calls"),
        pl.col("cost_usd").sum().round(6).alias("cost_usd"),
    )
    started = continuations.filter(
        pl.col("system").is_in(systems) & (pl.col("prefix_checked") > 0)
    )  # warm starts that ran (a plan the gateway could not build has nothing to check)
    drift = ~pl.col("prefix_exact")
    warm = started.group_by("system", "benchmark").agg(
        pl.len().cast(pl.Int64).alias("warm_starts"),
        pl.col("prefix_exact").mean().round(3).alias("prefix_exact"),
        drift.sum().cast(pl.Int64).alias("drifted"),
        pl.col("reason").filter(drift).sort().first().alias("first_drift"),
        pl.col("calls_replayed").sum().cast(pl.Int64).alias("calls_replayed"),
        pl.col("calls_live").sum().cast(pl.Int64).alias("calls_live"),
        (pl.col("status") == "flipped").sum().cast(pl.Int64).alias("flipped"),
    )
    return (
        rollouts.join(warm, on=["system", "benchmark"], how="left")
        .select([pl.col(c).cast(t) for c, t in COLUMNS.items()])
        .sort("framework", "system", "benchmark")
    )


def frameworks_html(table: pl.DataFrame) -> list[str]:
    """The report's section (nothing when no framework system ran)."""
    if table.is_empty():
        return []
    note = (
        "Rollouts of every framework system (a real agent framework, its model calls "
        "through the gateway) and the warm starts of their injected errors: success rate, "
        "agent steps per run, model calls and cost of the rollouts; of the warm starts "
        "that ran, the share whose prefix was reproduced exactly (each replayed request "
        "equal to the recorded one, each step the recorded one), the first drift's reason, "
        "calls answered from the recording vs asked live after the injection, and the "
        "runs the error flipped."
    )
    return ["<h2>Agent frameworks</h2>", f"<p class='note'>{html.escape(note)}</p>",
            table_html(table)]  # fmt: skip
