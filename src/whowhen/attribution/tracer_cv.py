"""k-fold cross-validation of tracer-lite on any labelled dataset (built or imported), so a
user can train on their own real labels and see what the model is worth before using it.

Folds are by task: runs of one task (a built run's injected siblings share it) never sit
on both sides of a fold, which would leak the task's answer into the score.
"""

from __future__ import annotations

import polars as pl

from whowhen.attribution.baselines import agent_steps
from whowhen.attribution.tracer import TracerConfig
from whowhen.attribution.tracer_train import Tables, Training, fold_of
from whowhen.errors import WhowhenError


def training_labels(labels: pl.DataFrame, split: str) -> tuple[pl.DataFrame, str]:
    """The labels to fit on, all marked `train` (what `tracer.fit` reads), and what they are:
    `split='auto'` takes the train split when the dataset has one (a built dataset), else
    every label (an imported one, whose labels are all test)."""
    if split == "auto":
        split = "train" if (labels["split"] == "train").any() else "all"
    chosen = labels if split == "all" else labels.filter(pl.col("split") == split)
    if chosen.height == 0:
        raise WhowhenError(f"no labels in split {split!r} to fit on", field="split")
    what = "every label" if split == "all" else f"the {split} split"
    return chosen.with_columns(pl.lit("train").alias("split")), what


def cross_validate(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    labels: pl.DataFrame,
    config: TracerConfig,
    k: int = 5,
) -> pl.DataFrame:
    """Out-of-fold predictions for every label (fit on the other folds, predict this one):
    run_id, fold, gold and predicted agent and step, hit columns, and random's chance (one
    over the run's agent steps; the share of them taken by the gold agent) per item. Every
    one of `labels` counts as a training label."""
    if k < 2:
        raise WhowhenError("cross-validation needs at least 2 folds", field="folds")
    folds = fold_of(runs, labels, k, config.seed)
    n_tasks = len(set(folds.values()))
    if n_tasks < 2:
        raise WhowhenError(f"{labels.height} labelled run(s), one task: too few to cross-validate")
    fold_col = labels.with_columns(
        pl.col("run_id").replace_strict(folds, return_dtype=pl.Int64).alias("fold")
    )
    cands = agent_steps(steps).join(labels.select("run_id", "decisive_agent"), on="run_id")
    chance = cands.group_by("run_id").agg(
        pl.len().alias("n_candidates"),
        (pl.col("actor") == pl.col("decisive_agent")).mean().alias("random_agent_chance"),
    )
    data = Tables(runs, steps, labels)
    none = Tables(runs.clear(), steps.clear(), labels.clear())
    preds = Training(none, {"data": data}, config, use_built=False).out_of_fold(k)
    parts = [
        fold_col.select("run_id", "fold", "decisive_agent", "decisive_step").join(
            preds.select("run_id", "agent", "step"), on="run_id", how="left"
        )
    ]
    out = pl.concat(parts).join(chance, on="run_id", how="left")
    return out.with_columns(
        (pl.col("step") == pl.col("decisive_step")).fill_null(False).alias("step_ok"),
        (pl.col("agent") == pl.col("decisive_agent")).fill_null(False).alias("agent_ok"),
        (1.0 / pl.col("n_candidates")).fill_null(0.0).alias("random_step_chance"),
        pl.col("random_agent_chance").fill_null(0.0),
    ).sort("run_id")
