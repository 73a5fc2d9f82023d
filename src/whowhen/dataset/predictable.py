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
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import sparse

from whowhen.dataset.audit import MAX_TRAIN, sample_items
from whowhen.dataset.positions import agent_step_table
from whowhen.dataset.probes import fit_logistic, hashed_matrix, step_text
from whowhen.schema import stable_id

log = logging.getLogger(__name__)


SCORE_RUNS = 2000
"""Held-out runs scored per feature matrix: a paper-scale build's 20,000 items hold
600,000 candidate steps, whose features at once would take several GB."""
CACHE_ROWS = 100_000
"""Up to this many candidate steps, their features are built once (about 3 MB per 1,000
steps) and each fold takes its rows; beyond it, per fold (each step is built three times
a round, but a paper-scale build stays within a few GB)."""


@dataclass(frozen=True)
class Candidates:
    """Every candidate step of the items, with its gold flag; each fold's features are
    built for the sampled training items and then for the held-out runs in chunks, or
    taken from `matrix`, built once for every step where they are few (`CACHE_ROWS`)."""

    steps: pl.DataFrame  # agent steps: run_id, step, their text, gold, _row (their index)
    matrix: sparse.csr_matrix | None = None

    def features(self, rows: pl.DataFrame) -> sparse.csr_matrix:
        if self.matrix is not None:
            return self.matrix[rows["_row"].to_numpy()]
        return _features(rows)

    @classmethod
    def of(cls, labels: pl.DataFrame, steps: pl.DataFrame) -> Candidates:
        gold = labels.select("run_id", pl.col("decisive_step").alias("step"), gold=pl.lit(1.0))
        cand = (
            agent_step_table(steps)
            .filter(pl.col("run_id").is_in(labels["run_id"].implode()))
            .join(gold, on=["run_id", "step"], how="left")
            .with_columns(pl.col("gold").fill_null(0.0))
        )
        cand = cand.select("run_id", "step", "actor", "content", "tool", "tool_args", "gold")
        cand = cand.with_row_index("_row")
        return cls(cand, _features(cand) if cand.height <= CACHE_ROWS else None)

    def of_runs(self, run_ids: pl.Series | list[str]) -> pl.DataFrame:
        ids = run_ids if isinstance(run_ids, pl.Series) else pl.Series(run_ids)
        return self.steps.filter(pl.col("run_id").is_in(ids.implode()))


def _features(rows: pl.DataFrame) -> sparse.csr_matrix:
    """Single precision: what the fit and the scoring use (`probes.fit_logistic`)."""
    matrix = hashed_matrix(step_text(r) for r in rows.iter_rows(named=True))
    return matrix.astype(np.float32)


def held_out_hits(
    labels: pl.DataFrame,
    runs: pl.DataFrame,
    cands: Candidates,
    folds: int,
    seed: int,
) -> pl.DataFrame:
    """Per item: whether the classifier fitted on the other folds picks its gold step
    (`hit`), its margin over the run's next best step, and the chance of a random pick."""
    task = dict(zip(runs["run_id"], runs["task_id"], strict=True))
    fold = [
        int(stable_id("predictable", seed, task.get(r, r)), 16) % folds for r in labels["run_id"]
    ]
    items = labels.select("run_id", "decisive_step").with_columns(pl.Series("fold", fold))
    out = []
    for f in range(folds):
        train = sample_items(items.filter(pl.col("fold") != f), MAX_TRAIN)
        held = items.filter(pl.col("fold") == f)
        if train.height == 0 or held.height == 0:
            continue
        fit = cands.of_runs(train["run_id"])
        w = fit_logistic(cands.features(fit), fit["gold"].to_numpy())
        ids = held["run_id"].to_list()
        for i in range(0, len(ids), SCORE_RUNS):
            chunk = ids[i : i + SCORE_RUNS]
            part = cands.of_runs(chunk)
            scored = part.select("run_id", "step").with_columns(
                pl.Series("score", cands.features(part) @ w[:-1])
            )
            out.append(_margins(scored, held.filter(pl.col("run_id").is_in(chunk))))
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
    labels: pl.DataFrame,
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    folds: int,
    seed: int,
    rounds: int = 1,
) -> pl.DataFrame:
    """`labels` without the held-out hits in excess of chance, surest first (see above),
    again on what is left with new folds, up to `rounds` times or until no excess is
    left: a classifier fitted on fewer items finds less than one fitted on the whole
    train split, so one round leaves part of what the audit's classifier finds."""
    if labels.height < 2 * folds:
        return labels
    cands = Candidates.of(labels, steps)
    for r in range(rounds):
        found = held_out_hits(labels, runs, cands, folds, seed + r)
        hits = found.filter(pl.col("hit"))
        chance = float(found["chance"].sum())
        excess = round(hits.height - chance)
        log.info(
            "dataset: round %d: the one-step classifier found %d of %d gold steps held out "
            "(chance %.0f); dropping the %d it was surest of",
            r + 1,
            hits.height,
            found.height,
            chance,
            max(excess, 0),
        )
        if excess <= 0:
            break
        dropped = hits.sort(["margin", "run_id"], descending=[True, False]).head(excess)
        labels = labels.filter(~pl.col("run_id").is_in(dropped["run_id"].implode()))
    return labels
