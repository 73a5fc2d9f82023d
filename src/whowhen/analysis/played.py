"""What the models actually did when they played the agents: per model-played (benchmark,
system) pair, the success rate, unreadable turns, early stops, steps, tokens and cost of
its rollouts, beside the same system's scripted reference where the run has one."""

from __future__ import annotations

import html

import polars as pl

from whowhen.analysis.html import table_html
from whowhen.registry import base_system, model_systems


def played_table(runs: pl.DataFrame) -> pl.DataFrame:
    """One row per (benchmark, system) among the model-played pairs and their scripted
    references (empty when no system was played by a model)."""
    played = runs.filter(pl.col("system").is_in(list(model_systems())))
    if played.is_empty():
        return pl.DataFrame()
    pairs = {(b, base_system(s)) for b, s in played.select("benchmark", "system").iter_rows()}
    reference = runs.filter(
        pl.struct("benchmark", "system").map_elements(
            lambda r: (r["benchmark"], r["system"]) in pairs, pl.Boolean
        )
    )
    meta = pl.col("meta").str.json_path_match
    return (
        pl.concat([played, reference])
        .group_by("benchmark", "system", "policy")
        .agg(
            pl.len().alias("runs"),
            pl.col("success").mean().round(3).alias("success_rate"),
            meta("$.parse_failures").cast(pl.Int64).sum().alias("unreadable_turns"),
            pl.col("end_reason").str.starts_with("stalled").sum().alias("stopped_early"),
            meta("$.trimmed").cast(pl.Int64).sum().alias("trimmed_observations"),
            pl.col("n_steps").mean().round(1).alias("steps_per_run"),
            pl.col("tokens_in").sum(),
            pl.col("tokens_out").sum(),
            pl.col("cost_usd").sum().round(6),
        )
        .sort("benchmark", pl.col("system").str.replace("^llm_", ""), "system")
    )


def played_html(table: pl.DataFrame) -> list[str]:
    """The report's section (nothing when no system was played by a model)."""
    if table.is_empty():
        return []
    return [
        "<h2>Model-played systems</h2>",
        "<p class='note'>Rollouts of every system a model played (<code>llm_*</code>), beside "
        "the same system's scripted reference: success rate, turns the protocol could not "
        "read (a format reminder followed each), runs stopped early for going nowhere "
        "(the same turn repeated, or a lone agent without a tool call), observations "
        "trimmed to the context, steps per run (observations included), tokens and cost. "
        f"{html.escape('Policy: the model id, or scripted.')}</p>",
        table_html(table),
    ]
