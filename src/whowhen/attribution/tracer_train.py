"""What tracer-lite learns from: the built train split and, where the config says so, the
labels of imported datasets (a user's own labelled runs, or the real dev half of a public
benchmark), each imported set predicted out of fold so that its report row is honest.

Why weights: a few hundred real labels would vanish among a thousand built ones, so the
imported runs together carry `imported_share` of the loss. Why out of fold: a model that
saw a run's label cannot be scored on it; each imported run is predicted by a model fitted
on the built labels and the other folds (whole tasks to a fold). The features are built
once and every fit chooses its runs from them.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass

import numpy as np
import polars as pl

from whowhen.attribution.tracer import (
    TracerConfig,
    TracerModel,
    fit_features,
    hashed_dim,
    predict_features,
)
from whowhen.attribution.tracer_features import BASE, Features, build
from whowhen.schema import LIFTS, PREDICTIONS, empty, to_arrow

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Tables:
    """One dataset's runs, steps and labels."""

    runs: pl.DataFrame
    steps: pl.DataFrame
    labels: pl.DataFrame


@dataclass(frozen=True)
class Fitted:
    """The model of the built and imported labels, the model of the built train split alone, the
    out-of-fold predictions of every imported training run, and the features' means at
    the gold step and elsewhere in each group of runs learned from (LIFTS)."""

    model: TracerModel
    built_model: TracerModel
    held_out: pl.DataFrame
    lifts: pl.DataFrame


def _gold(labels: pl.DataFrame) -> dict[str, int]:
    return dict(zip(labels["run_id"], labels["decisive_step"], strict=True))


def _weights(n_built: int, imported: list[str], share: float) -> dict[str, float] | None:
    """Each imported run's weight, so that together they carry `share` of the loss."""
    if not n_built or not imported or not 0 < share < 1:
        return None
    return dict.fromkeys(imported, share * n_built / ((1 - share) * len(imported)))


def fold_of(runs: pl.DataFrame, labels: pl.DataFrame, k: int, seed: int) -> dict[str, int]:
    """run_id -> fold, whole tasks to a fold, tasks shuffled by `seed`."""
    task_of = dict(zip(runs["run_id"], runs["task_id"], strict=True))
    tasks = sorted({task_of.get(r, r) for r in labels["run_id"]})
    random.Random(seed).shuffle(tasks)
    fold = {task: i % k for i, task in enumerate(tasks)}
    return {r: fold[task_of.get(r, r)] for r in labels["run_id"]}


class Training:
    """The labelled runs of the built train split (when `use_built`) and of the imported
    datasets, their features built once; every fit below picks its runs from them."""

    def __init__(
        self,
        built: Tables,
        imported: dict[str, Tables],
        config: TracerConfig,
        use_built: bool = True,
        share: float = 0.8,
    ) -> None:
        self.imported, self.config, self.share = imported, config, share
        self.built_gold = _gold(built.labels.filter(pl.col("split") == "train"))
        self.used_built = self.built_gold if use_built else {}
        self.imported_gold = {name: _gold(t.labels) for name, t in imported.items()}
        self.gold = {
            **self.built_gold,
            **{r: s for g in self.imported_gold.values() for r, s in g.items()},
        }
        runs = pl.concat([built.runs, *(t.runs for t in imported.values())])
        steps = pl.concat([built.steps, *(t.steps for t in imported.values())])
        labelled = runs.filter(pl.col("run_id").is_in(list(self.gold)))
        self.feats = build(labelled, steps, hashed_dim(config))
        self.groups = {r: BUILT for r in self.built_gold} | {
            row["run_id"]: _subset_name(row)
            for row in labelled.select("run_id", "benchmark", "subset").iter_rows(named=True)
            if row["run_id"] not in self.built_gold
        }

    def fit(self, imported_gold: dict[str, dict[str, int]]) -> TracerModel:
        """A model of the used built labels and these imported ones, weighted."""
        extra = [r for g in imported_gold.values() for r in g]
        gold = {**self.used_built, **{r: s for g in imported_gold.values() for r, s in g.items()}}
        weights = _weights(len(self.used_built), extra, self.share)
        return fit_features(self.feats, gold, self.config, weights)

    def out_of_fold(self, folds: int) -> pl.DataFrame:
        """Each imported run predicted by a model fitted without its fold's labels."""
        parts = []
        for name, tables in self.imported.items():
            if tables.labels.height < 2:
                continue
            fold = fold_of(tables.runs, tables.labels, folds, self.config.seed)
            for f in sorted(set(fold.values())):
                held = {r for r, k in fold.items() if k == f}
                rest = {r: s for r, s in self.imported_gold[name].items() if r not in held}
                model = self.fit({**self.imported_gold, name: rest})
                parts.append(predict_features(model, self.feats, held))
            log.info("tracer_lite: %s predicted out of %d folds", name, len(set(fold.values())))
        return pl.concat(parts).sort("run_id") if parts else empty(PREDICTIONS)


def fit_tracer(
    built: Tables,
    imported: dict[str, Tables],
    config: TracerConfig,
    *,
    use_built: bool = True,
    share: float = 0.8,
    folds: int = 5,
) -> Fitted:
    """Fit on the built train split (when `use_built`) and the imported datasets' labels,
    the built-only model beside it, and the imported runs' out-of-fold predictions."""
    training = Training(built, imported, config, use_built, share)
    model = training.fit(training.imported_gold)
    model.trained_on = {"built": len(training.built_gold)} if use_built else {}
    model.trained_on |= {name: len(g) for name, g in training.imported_gold.items()}
    built_model = fit_features(training.feats, training.built_gold, config)
    built_model.trained_on = {"built": len(training.built_gold)}
    built_model.name = f"{model.name}_built"
    lifts = feature_means(training.feats, training.gold, training.groups)
    return Fitted(model, built_model, training.out_of_fold(folds), lifts)


BUILT = "built (train split)"


def _subset_name(run: dict) -> str:
    """`benchmark[/subset]`, as the report names an imported dataset's part."""
    return run["benchmark"] + (f"/{run['subset']}" if run["subset"] else "")


def feature_means(feats: Features, gold: dict[str, int], groups: dict[str, str]) -> pl.DataFrame:
    """LIFTS rows: per group and base feature (a long run's copies left out), the mean at
    the gold step and at the other agent steps, over the runs `gold` labels."""
    if not gold or not feats.n_rows:  # nothing learned from (a model that never succeeded)
        return empty(LIFTS)
    width = len(BASE)
    matrix = np.zeros((feats.n_rows, width))
    keep = feats.cols < width
    np.add.at(matrix, (feats.rows[keep], feats.cols[keep]), feats.vals[keep])
    row_run = np.repeat(np.arange(len(feats.run_ids)), np.diff(feats.offsets))
    labelled = np.asarray([r in gold for r in feats.run_ids], dtype=bool)[row_run]
    run_group = np.asarray([groups.get(r, "") for r in feats.run_ids])[row_run]
    is_gold = feats.steps == np.asarray([gold.get(r, -1) for r in feats.run_ids])[row_run]
    rows = []
    for name in sorted(set(run_group[labelled])):
        here = labelled & (run_group == name)
        n_runs = len({feats.run_ids[k] for k in row_run[here]})
        at_gold, other = matrix[here & is_gold], matrix[here & ~is_gold]
        for j, feature in enumerate(BASE):
            rows.append(
                {
                    "group": name,
                    "feature": feature,
                    "gold_mean": round(float(at_gold[:, j].mean()), 4) if len(at_gold) else None,
                    "other_mean": round(float(other[:, j].mean()), 4) if len(other) else None,
                    "n_runs": n_runs,
                }
            )
    return pl.from_arrow(to_arrow(rows, LIFTS))
