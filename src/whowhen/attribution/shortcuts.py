"""Shortcut predictors for the dataset audit: fitted on the *train* split's labels, they
look only at who is usually blamed, where in the run, and how long the run is.

If one of them scores well on the test split, the dataset has a shortcut an attributor
could learn instead of reading the trajectory (AgenTracer's released test file can be
solved 72% of the time by always naming one agent). They are attributors like any other,
so the report scores them beside the real ones.
"""

from __future__ import annotations

import logging
import statistics
from collections import Counter
from collections.abc import Callable

import polars as pl

from whowhen.attribution.baselines import agent_steps, predict_each
from whowhen.attribution.kinds import ATTRIBUTORS, Attributor, AttributorContext

log = logging.getLogger(__name__)

Fitted = Callable[[pl.DataFrame, str], tuple[str, int]]
"""(agent steps of one run, its system) -> (agent, step)."""


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


_NO_LABELS = pl.DataFrame(
    schema={
        "run_id": pl.String,
        "split": pl.String,
        "decisive_agent": pl.String,
        "decisive_step": pl.Int64,
    }
)


def shortcut(
    name: str, fit: Callable[[pl.DataFrame], Fitted], labels: pl.DataFrame | None
) -> Attributor:
    """Shortcut predictor `fit` as an attributor: fitted on the train split of `labels`
    when it runs (no train split: no predictions)."""

    def run(runs: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
        candidates = agent_steps(steps)
        system_of = dict(zip(runs["run_id"], runs["system"], strict=True))
        train = training_rows(labels if labels is not None else _NO_LABELS, runs, candidates)
        fitted = fit(train) if train.height else None
        if fitted is None:
            log.warning("%s: no train split to fit on; no predictions", name)

        def pick(frame: pl.DataFrame, _: pl.DataFrame) -> tuple[str, int, str | None] | None:
            if fitted is None or frame.height == 0:
                return None
            return (*fitted(frame, system_of[frame["run_id"][0]]), None)

        return predict_each(name, runs, steps, candidates, pick)

    return run


_SHORTCUT = {
    "protocol": "baseline",
    "family": "none",
    "section": "shortcuts",
    "fitted_on_train": True,
}


@ATTRIBUTORS.register("majority_agent", **_SHORTCUT)
def _majority_agent(ctx: AttributorContext) -> Attributor:
    return shortcut("majority_agent", majority_agent, ctx.labels)


@ATTRIBUTORS.register("position_prior", **_SHORTCUT)
def _position_prior(ctx: AttributorContext) -> Attributor:
    return shortcut("position_prior", position_prior, ctx.labels)


@ATTRIBUTORS.register("length_prior", **_SHORTCUT)
def _length_prior(ctx: AttributorContext) -> Attributor:
    return shortcut("length_prior", length_prior, ctx.labels)
