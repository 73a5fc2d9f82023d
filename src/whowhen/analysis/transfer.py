"""Built versus real, for the imported-datasets section: how the runs differ in shape, and
what each of tracer-lite's features looks like at the gold step against the other agent
steps, in the built train split and in each imported dataset it learned from (the tracer
fit computes those means from the features it built: `tracer_train.feature_means`).

Why: a model learned on built runs transfers only as far as its cues mean the same in real
ones. The shape table says where the worlds differ (length, gold positions, tool-output
speakers); the feature table says which cues point the same way (a positive lift in both)
and which mislead (opposite signs).
"""

from __future__ import annotations

import polars as pl

from whowhen.analysis.items import dataset_name
from whowhen.attribution.baselines import agent_steps
from whowhen.attribution.tracer_features import BASE
from whowhen.attribution.tracer_train import BUILT


def _groups(runs: pl.DataFrame, labels: pl.DataFrame, built: list[str]) -> pl.DataFrame:
    """run_id -> group: the built train split as one group, each imported dataset apart
    (built test items are left out: the comparison is of what tracer-lite learns from)."""
    named = runs.select("run_id", "benchmark", dataset_name())
    joined = labels.select("run_id", "split", "decisive_step").join(named, on="run_id")
    group = (
        pl.when(pl.col("benchmark").is_in(built))
        .then(pl.when(pl.col("split") == "train").then(pl.lit(BUILT)))
        .otherwise(pl.col("dataset"))
    )
    return joined.with_columns(group.alias("group")).drop_nulls("group")


def run_shapes(
    runs: pl.DataFrame, steps: pl.DataFrame, labels: pl.DataFrame, built: list[str]
) -> pl.DataFrame:
    """Per group: runs, agent steps per run (median, p90), characters per agent step
    (median), the share of steps that are tool output or other non-agent speakers, the
    gold step's relative position among the agent steps, and how often the gold step is
    its agent's first."""
    groups = _groups(runs, labels, built)
    cands = agent_steps(steps).join(groups.select("run_id", "group"), on="run_id")
    ranked = cands.with_columns(
        (pl.col("step").rank("ordinal").over("run_id") - 1).alias("k"),
        pl.len().over("run_id").alias("n"),
        (pl.col("step").rank("ordinal").over("run_id", "actor") == 1).alias("first_of_actor"),
    )
    gold = ranked.join(
        groups.select("run_id", pl.col("decisive_step").alias("step")), on=["run_id", "step"]
    )
    per_run = ranked.group_by("run_id", "group").agg(pl.len().alias("agent_steps"))
    counts = steps.join(groups.select("run_id", "group"), on="run_id").group_by("group").len()
    return (
        per_run.group_by("group")
        .agg(
            pl.len().alias("runs"),
            pl.col("agent_steps").median().alias("agent_steps_median"),
            pl.col("agent_steps").quantile(0.9, "nearest").alias("agent_steps_p90"),
            pl.col("agent_steps").sum().alias("_agent"),
        )
        .join(
            cands.group_by("group").agg(
                pl.col("content").str.len_chars().median().alias("chars_per_step")
            ),
            on="group",
        )
        .join(counts, on="group")
        .with_columns((1 - pl.col("_agent") / pl.col("len")).round(3).alias("non_agent_share"))
        .drop("_agent", "len")
        .join(
            gold.group_by("group").agg(
                (pl.col("k") / (pl.col("n") - 1).clip(1)).mean().round(3).alias("gold_rel_pos"),
                pl.col("first_of_actor").mean().round(3).alias("gold_first_of_agent"),
            ),
            on="group",
            how="left",
        )
        .sort(pl.col("group") != BUILT, "group")
    )


def lift_table(lifts: pl.DataFrame) -> pl.DataFrame:
    """The LIFTS rows of the tracer fit as one row per feature: its lift (mean at the gold
    step minus mean at the other agent steps) in each group, and whether every imported
    group's lift has the built lift's sign."""
    if lifts.is_empty():
        return pl.DataFrame({"feature": list(BASE)})
    names = sorted(set(lifts["group"]), key=lambda g: (g != BUILT, g))
    long = lifts.with_columns(
        (pl.col("gold_mean") - pl.col("other_mean")).round(3).alias("lift"),
        pl.col("feature").replace_strict({f: i for i, f in enumerate(BASE)}).alias("_order"),
    )
    table = (
        long.pivot("group", index=["feature", "_order"], values="lift")
        .sort("_order")
        .drop("_order")
        .select("feature", *names)
    )
    real = [n for n in names if n != BUILT]
    if BUILT in names and real:
        sign = pl.col(BUILT).sign()
        agree = pl.all_horizontal([pl.col(n).sign() == sign for n in real]) & (sign != 0)
        table = table.with_columns(agree.alias("same_sign"))
    return table
