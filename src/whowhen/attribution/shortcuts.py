"""Shortcut predictors for the dataset audit: fitted on the *train* split's labels, they
look only at who is usually blamed, where in the run, and how long the run is.

If one of them scores well on the test split, the dataset has a shortcut an attributor
could learn instead of reading the trajectory (AgenTracer's released test file can be
solved 72% of the time by always naming one agent). They are attributors like any other,
so the report scores them beside the real ones.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable

import polars as pl


def training_rows(
    labels: pl.DataFrame, runs: pl.DataFrame, agent_steps: pl.DataFrame
) -> pl.DataFrame:
    """The train split as (system, agent, index, n): where the gold step sits."""
    train = labels.filter(pl.col("split") == "train").join(
        runs.select("run_id", "system"), on="run_id"
    )
    ranked = agent_steps.with_columns(
        pl.int_range(pl.len()).over("run_id").alias("index"),
        pl.len().over("run_id").alias("n"),
    )
    return train.join(
        ranked.select("run_id", pl.col("step").alias("decisive_step"), "index", "n"),
        on=["run_id", "decisive_step"],
    ).select("system", pl.col("decisive_agent").alias("agent"), "index", "n")


def _by_system(train: pl.DataFrame, system: str) -> pl.DataFrame:
    own = train.filter(pl.col("system") == system)
    return own if own.height else train


def _at(steps: pl.DataFrame, index: int) -> tuple[str, int]:
    row = steps.row(max(0, min(index, steps.height - 1)), named=True)
    return row["actor"], row["step"]


def majority_agent(train: pl.DataFrame) -> Callable[[pl.DataFrame, str], tuple[str, int]]:
    """Always the system's most blamed agent (at its first step in the run)."""

    def predict(steps: pl.DataFrame, system: str) -> tuple[str, int]:
        agents = Counter(_by_system(train, system)["agent"].to_list())
        top = agents.most_common(1)[0][0] if agents else steps["actor"][0]
        own = steps.filter(pl.col("actor") == top)
        return (top, own["step"][0]) if own.height else _at(steps, 0)

    return predict


def position_prior(train: pl.DataFrame) -> Callable[[pl.DataFrame, str], tuple[str, int]]:
    """The step at the median relative position of the system's gold steps."""

    def predict(steps: pl.DataFrame, system: str) -> tuple[str, int]:
        rows = _by_system(train, system)
        rel = [i / max(1, n - 1) for i, n in zip(rows["index"], rows["n"], strict=True)]
        r = statistics.median(rel) if rel else 0.5
        return _at(steps, round(r * (steps.height - 1)))

    return predict


def length_prior(train: pl.DataFrame) -> Callable[[pl.DataFrame, str], tuple[str, int]]:
    """The gold step index as a least-squares line in the run's length."""

    def predict(steps: pl.DataFrame, system: str) -> tuple[str, int]:
        rows = _by_system(train, system)
        xs, ys = [float(n) for n in rows["n"]], [float(i) for i in rows["index"]]
        if len(xs) >= 2 and len(set(xs)) > 1:
            slope, intercept = statistics.linear_regression(xs, ys)
        else:
            slope, intercept = 0.0, statistics.mean(ys) if ys else 0.0
        return _at(steps, round(intercept + slope * steps.height))

    return predict


SHORTCUTS = {
    "majority_agent": majority_agent,
    "position_prior": position_prior,
    "length_prior": length_prior,
}
