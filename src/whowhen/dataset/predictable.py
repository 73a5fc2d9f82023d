"""Adversarial filtering of the items whose gold step a one-step text classifier finds
more often than chance (after AFLite, Le Bras et al. 2020, "Adversarial Filters of Dataset
Biases").

Why: the leakage audit's one-step classifier reads each agent step alone (its actor, text
and tool call) and picks a run's likeliest step. It beats random where errors can only be
injected into certain kinds of step (a document read for "the founder", a colour chosen),
which the coarse kind balance of `select.match_kinds` does not see. A model that learned
that would be rewarded for knowing where the operators act, not for reading the run.

How: the items are split into folds by task (siblings share a task, and a sibling's text
would give its twin away); for each fold the classifier is fitted on the others and
predicts the fold's runs. Of the items it gets right, only the excess over chance is
dropped: the expected number of random hits (one over each run's agent steps) is kept, and
the hits dropped are those it was surest of (the largest margin of the gold step's score
over the run's next best). So the filter removes what the classifier knows beyond chance,
not every lucky hit, which would bias the dataset against short runs. The audit then
measures a classifier fitted on the filtered train split: the same family of probe, so the
stage's log says what the held-out classifier found before the filter (hits against
chance) and how many items it dropped.
"""

from __future__ import annotations

import logging

import numpy as np
import polars as pl

from whowhen.dataset.audit import MAX_TRAIN, sample_items
from whowhen.dataset.positions import agent_step_table
from whowhen.dataset.probes import fit_logistic, hashed_matrix, step_text
from whowhen.schema import stable_id

log = logging.getLogger(__name__)


def _scores(
    train_steps: pl.DataFrame, gold: set[tuple[str, int]], steps: pl.DataFrame
) -> np.ndarray:
    """The classifier fitted on `train_steps` (gold = 1), scoring `steps`."""
    rows = train_steps.to_dicts()
    y = np.array([1.0 if (r["run_id"], r["step"]) in gold else 0.0 for r in rows])
    w = fit_logistic(hashed_matrix(step_text(r) for r in rows), y)
    return hashed_matrix(step_text(r) for r in steps.iter_rows(named=True)) @ w[:-1]


def held_out_hits(
    labels: pl.DataFrame, runs: pl.DataFrame, steps: pl.DataFrame, folds: int, seed: int
) -> pl.DataFrame:
    """Per item: whether the classifier fitted on the other folds picks its gold step
    (`hit`), its margin over the run's next best step, and the chance of a random pick."""
    task = dict(zip(runs["run_id"], runs["task_id"], strict=True))
    fold = [
        int(stable_id("predictable", seed, task.get(r, r)), 16) % folds for r in labels["run_id"]
    ]
    items = labels.select("run_id", "decisive_step").with_columns(pl.Series("fold", fold))
    cand = agent_step_table(steps).filter(pl.col("run_id").is_in(items["run_id"].implode()))
    out = []
    for f in range(folds):
        train = sample_items(items.filter(pl.col("fold") != f), MAX_TRAIN)
        held = items.filter(pl.col("fold") == f)
        if train.height == 0 or held.height == 0:
            continue
        gold = set(zip(train["run_id"], train["decisive_step"], strict=True))
        train_steps = cand.filter(pl.col("run_id").is_in(train["run_id"].implode()))
        test_steps = cand.filter(pl.col("run_id").is_in(held["run_id"].implode()))
        scored = test_steps.select("run_id", "step").with_columns(
            pl.Series("score", _scores(train_steps, gold, test_steps))
        )
        out.append(_margins(scored, held))
    if not out:
        return items.select("run_id").with_columns(
            hit=pl.lit(False), margin=pl.lit(0.0), chance=pl.lit(0.0)
        )
    return pl.concat(out)


def _margins(scored: pl.DataFrame, held: pl.DataFrame) -> pl.DataFrame:
    """hit, margin and chance of each held-out item from its run's step scores."""
    ranked = scored.sort(["run_id", "score", "step"], descending=[False, True, False])
    top = ranked.group_by("run_id", maintain_order=True).agg(
        pl.col("step").first().alias("best"),
        pl.col("score").first().alias("s1"),
        pl.col("score").slice(1, 1).first().alias("s2"),
        pl.len().alias("n"),
    )
    return (
        held.join(top, on="run_id", how="inner")
        .with_columns(
            hit=pl.col("best") == pl.col("decisive_step"),
            margin=(pl.col("s1") - pl.col("s2").fill_null(pl.col("s1"))).cast(pl.Float64),
            chance=1.0 / pl.col("n"),
        )
        .select("run_id", "hit", "margin", "chance")
    )


def drop_predictable(
    labels: pl.DataFrame, runs: pl.DataFrame, steps: pl.DataFrame, folds: int, seed: int
) -> pl.DataFrame:
    """`labels` without the held-out hits in excess of chance, surest first (see above)."""
    if labels.height < 2 * folds:
        return labels
    found = held_out_hits(labels, runs, steps, folds, seed)
    hits = found.filter(pl.col("hit"))
    excess = round(hits.height - float(found["chance"].sum()))
    if excess <= 0:
        return labels
    dropped = hits.sort(["margin", "run_id"], descending=[True, False]).head(excess)
    log.info(
        "dataset: the one-step classifier found %d of %d gold steps held out (chance %.0f); "
        "dropping the %d it was surest of",
        hits.height,
        found.height,
        float(found["chance"].sum()),
        dropped.height,
    )
    return labels.filter(~pl.col("run_id").is_in(dropped["run_id"].implode()))
