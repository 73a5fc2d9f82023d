"""Where a gold step sits in its run: what the dataset's selection spreads and the
audit's position probes read."""

from __future__ import annotations

import polars as pl

from whowhen.schema import NON_AGENT_ACTORS


def agent_step_table(steps: pl.DataFrame) -> pl.DataFrame:
    """Candidate steps (agent actions and messages), each with its index and the run's count
    of them: what a step-level attributor chooses among."""
    return (
        steps.filter((pl.col("kind") != "observation") & ~pl.col("actor").is_in(NON_AGENT_ACTORS))
        .sort("run_id", "step")
        .with_columns(
            pl.int_range(pl.len()).over("run_id").alias("index"),
            pl.len().over("run_id").alias("n_agent"),
        )
    )


def gold_positions(labels: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """Per labelled item: how many agent steps it has, the gold's index among them, its
    relative position (index / count, in [0, 1)) and whether it is the last agent step."""
    cand = agent_step_table(steps).select(
        "run_id", pl.col("step").alias("decisive_step"), "index", "n_agent"
    )
    return labels.join(cand, on=["run_id", "decisive_step"], how="left").with_columns(
        (pl.col("index") / pl.col("n_agent")).alias("rel_pos"),
        (pl.col("index") == pl.col("n_agent") - 1).alias("is_last"),
    )
