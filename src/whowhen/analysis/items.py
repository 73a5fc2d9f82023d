"""One scored row per (labelled trajectory, attributor): the unit every attribution metric,
table and figure aggregates, so they all score alike.

Every attributor is scored on every label, so a trajectory it has no prediction for
counts as wrong (never silently dropped). Matching is exact: the agent name must equal
the gold agent, the step index the gold index (gold step 1 never matches a predicted 10),
and a prediction with `parse_ok` false counts as wrong whatever it holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

import polars as pl

from whowhen.analysis.attributor_info import UNKNOWN, attributor_protocol
from whowhen.attribution.baselines import agent_steps
from whowhen.errors import WhowhenError

KS = (1, 2, 3, 4, 5)
"""The step tolerances k of the `within_k` outcomes (`step_acc_pmK` in the metrics)."""
LENGTH_EDGES = (1, 5, 10, 20)
"""Agent-step bins: 1-4, 5-9, 10-19, 20+ (and 0 for a run without agent steps)."""
ITEM_KEYS = (
    "dataset",
    "benchmark",
    "modality",
    "category",
    "topology",
    "system",
    "length_bin",
    "source",
    "mode",
    "mode_category",
)
"""`category` is the run's task category; `mode` and `mode_category` are the gold label's."""


def dataset_name() -> pl.Expr:
    """`benchmark[/subset]` of a runs row, as the SQL tables name datasets."""
    return (
        pl.when(pl.col("subset").is_null())
        .then(pl.col("benchmark"))
        .otherwise(pl.col("benchmark") + "/" + pl.col("subset"))
        .alias("dataset")
    )


def length_bin(n: pl.Expr, edges: Sequence[int] = LENGTH_EDGES) -> pl.Expr:
    """Bin label of an agent-step count: edges (1, 5, 10, 20) give 1-4, 5-9, 10-19, 20+."""
    if not edges or any(b <= a for a, b in pairwise(edges)) or edges[0] < 1:
        raise WhowhenError(f"length bin edges must be increasing and >= 1, got {list(edges)}")
    low = "0" if edges[0] == 1 else f"0-{edges[0] - 1}"
    expr = pl.when(n < edges[0]).then(pl.lit(low))
    for a, b in pairwise(edges):
        expr = expr.when(n < b).then(pl.lit(f"{a}-{b - 1}" if b - 1 > a else str(a)))
    return expr.otherwise(pl.lit(f"{edges[-1]}+"))


def scored_items(
    labels: pl.DataFrame,
    predictions: pl.DataFrame,
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    attributor_info: Mapping[str, Mapping[str, str]] | None = None,
    length_edges: Sequence[int] = LENGTH_EDGES,
) -> pl.DataFrame:
    """One row per (label, attributor) with every breakdown key and per-item outcomes."""
    names = sorted(set(predictions["attributor"].to_list()))
    info = pl.DataFrame(
        [{"attributor": n, **attributor_protocol(n, attributor_info)} for n in names],
        schema={"attributor": pl.String, "protocol": pl.String, "family": pl.String},
    )
    gold = _gold(labels, runs, steps, length_edges)
    pred = _predicted(predictions)
    items = (
        gold.join(info, how="cross")
        .join(pred, on=["run_id", "attributor"], how="left")
        .with_columns(pl.col("usable", "has_row").fill_null(False))
    )
    items = _outcomes(items)
    keys = [k for k in ITEM_KEYS if k != "length_bin"]
    return items.with_columns(pl.col(keys).cast(pl.String).fill_null(UNKNOWN)).sort(
        "attributor", "run_id"
    )


def _gold(
    labels: pl.DataFrame, runs: pl.DataFrame, steps: pl.DataFrame, length_edges: Sequence[int]
) -> pl.DataFrame:
    """The labels with their run's breakdown keys and length bin: one row per item."""
    n_agent = agent_steps(steps).group_by("run_id").agg(pl.len().cast(pl.Int64).alias("n_agent"))
    run_cols = runs.select(
        "run_id",
        dataset_name(),
        "benchmark",
        "modality",
        "category",
        "topology",
        "system",
    )
    return (
        labels.select(
            "run_id",
            "decisive_agent",
            "decisive_step",
            pl.col("mode").alias("gold_mode"),
            pl.col("category").alias("mode_category"),
            "source",
            pl.col("split").fill_null("unsplit"),
        )
        .join(run_cols, on="run_id", how="left")
        .join(n_agent, on="run_id", how="left")
        .with_columns(pl.col("n_agent").fill_null(0))
        .with_columns(length_bin(pl.col("n_agent"), length_edges).alias("length_bin"))
    )


def _predicted(predictions: pl.DataFrame) -> pl.DataFrame:
    """Each prediction's answer (prefixed `p_`, beside the gold's), usability and usage."""
    return predictions.select(
        "run_id",
        "attributor",
        pl.col("agent").alias("p_agent"),
        pl.col("step").alias("p_step"),
        pl.col("mode").alias("p_mode"),
        pl.col("parse_ok").fill_null(False).alias("usable"),
        pl.lit(True).alias("has_row"),
        (pl.col("tokens_in").fill_null(0) + pl.col("tokens_out").fill_null(0)).alias("tokens"),
        pl.col("cost_usd").fill_null(0.0).alias("cost"),
        pl.col("calls").fill_null(0).alias("calls"),
    )


def _outcomes(items: pl.DataFrame) -> pl.DataFrame:
    """Per-item hits (exact agent, step, mode; step within ±k) and |Δstep|: an unusable
    prediction hits nothing."""
    ok = pl.col("usable")
    err = pl.when(ok).then((pl.col("p_step") - pl.col("decisive_step")).abs())
    return items.with_columns(
        (ok & (pl.col("p_agent") == pl.col("decisive_agent"))).fill_null(False).alias("agent_ok"),
        (ok & (pl.col("p_step") == pl.col("decisive_step"))).fill_null(False).alias("step_ok"),
        err.alias("abs_err"),
        pl.col("gold_mode").is_not_null().alias("mode_known"),
        (ok & (pl.col("p_mode") == pl.col("gold_mode"))).fill_null(False).alias("mode_ok"),
    ).with_columns(
        (pl.col("agent_ok") & pl.col("step_ok")).alias("joint_ok"),
        *((pl.col("abs_err") <= k).fill_null(False).alias(f"within_{k}") for k in KS),
        pl.col("gold_mode").alias("mode"),
    )
