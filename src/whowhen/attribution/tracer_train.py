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
from whowhen.attribution.tracer_cv import fold_of
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
    built_gold = _gold(built.labels.filter(pl.col("split") == "train"))
    imported_gold = {name: _gold(t.labels) for name, t in imported.items()}
    labelled = [*built_gold, *(r for g in imported_gold.values() for r in g)]
    runs = pl.concat([built.runs, *(t.runs for t in imported.values())])
    steps = pl.concat([built.steps, *(t.steps for t in imported.values())])
    feats = build(runs.filter(pl.col("run_id").is_in(labelled)), steps, hashed_dim(config))

    def fit_on(gold_by_name: dict[str, dict[str, int]]) -> TracerModel:
        mine = built_gold if use_built else {}
        extra = [r for g in gold_by_name.values() for r in g]
        gold = {**mine, **{r: s for g in gold_by_name.values() for r, s in g.items()}}
        return fit_features(feats, gold, config, _weights(len(mine), extra, share))

    model = fit_on(imported_gold)
    model.trained_on = {"built": len(built_gold)} if use_built else {}
    model.trained_on |= {name: len(g) for name, g in imported_gold.items()}
    built_model = fit_features(feats, built_gold, config)
    built_model.trained_on = {"built": len(built_gold)}
    built_model.name = f"{model.name}_built"
    held_out = []
    for name, tables in imported.items():
        if tables.labels.height < 2:
            continue
        fold = fold_of(tables.runs, tables.labels, folds, config.seed)
        for f in sorted(set(fold.values())):
            held = {r for r, k in fold.items() if k == f}
            rest = {r: s for r, s in imported_gold[name].items() if r not in held}
            fold_model = fit_on({**imported_gold, name: rest})
            held_out.append(predict_features(fold_model, feats, held))
        log.info("%s: %s predicted out of %d folds", model.name, name, len(set(fold.values())))
    out = pl.concat(held_out).sort("run_id") if held_out else empty(PREDICTIONS)
    groups = {r: BUILT for r in built_gold} | {
        r: _subset_name(row)
        for t in imported.values()
        for row in t.runs.select("run_id", "benchmark", "subset").iter_rows(named=True)
        if (r := row["run_id"]) in labelled
    }
    gold = {**built_gold, **{r: s for g in imported_gold.values() for r, s in g.items()}}
    return Fitted(model, built_model, out, feature_means(feats, gold, groups))


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
