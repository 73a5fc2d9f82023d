"""Attribution metrics per breakdown group with bootstrap intervals, for honest comparisons.

They aggregate `items.scored_items` (every attributor on every label, exact matching).
Breakdowns are one-way (`by=["modality", "system"]`) or crossed (`"modality+topology"`,
group values joined by "/"). Item-level keys (dataset, modality, category, topology,
...) split each attributor's items. Attributor-level keys (`protocol`, `family`) pool the
attributors of a group instead: those rows have attributor "all", and their bootstrap
resamples trajectories (each carrying all its pooled predictions), so correlated answers
on one trajectory are not counted as independent evidence.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from whowhen.analysis.attributor_info import ATTRIBUTOR_KEYS
from whowhen.analysis.items import ITEM_KEYS, KS, LENGTH_EDGES, scored_items
from whowhen.errors import WhowhenError

DEFAULT_BY = (
    "dataset",
    "modality",
    "category",
    "topology",
    "system",
    "length_bin",
    "protocol",
    "family",
)
BOOTSTRAPPED = ("agent_acc", "step_acc", "joint_acc")
_OK = {"agent_acc": "agent_ok", "step_acc": "step_ok", "joint_acc": "joint_ok"}


def _parts(key: str) -> list[str]:
    parts = key.split("+")
    known = (*ITEM_KEYS, *ATTRIBUTOR_KEYS)
    bad = [p for p in parts if p not in known]
    if bad:
        raise WhowhenError(f"unknown breakdown {bad[0]!r}; known: {', '.join(known)}", field="by")
    return parts


def _long(items: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """Items repeated once per breakdown (and 'all'), with split 'all' roll-ups."""
    frames = [items.with_columns(breakdown=pl.lit("all"), group=pl.lit("all"))]
    for key in by:
        parts = _parts(key)
        group = pl.concat_str([pl.col(p) for p in parts], separator="/")
        frame = items.with_columns(breakdown=pl.lit(key), group=group)
        if any(p in ATTRIBUTOR_KEYS for p in parts):  # pooled over the group's attributors
            frame = frame.with_columns(
                attributor=pl.lit("all"),
                **{k: pl.lit("all") for k in ATTRIBUTOR_KEYS if k not in parts},
            )
        frames.append(frame)
    long = pl.concat(frames, how="vertical")
    return pl.concat([long, long.with_columns(split=pl.lit("all"))], how="vertical")


def _point(long: pl.DataFrame) -> pl.DataFrame:
    mode_n = pl.col("mode_known").sum()
    has = pl.col("has_row")
    return long.group_by("attributor", "protocol", "family", "breakdown", "group", "split").agg(
        pl.len().cast(pl.Int64).alias("n"),
        pl.col("run_id").n_unique().cast(pl.Int64).alias("n_items"),
        pl.col("agent_ok").mean().alias("agent_acc"),
        pl.col("step_ok").mean().alias("step_acc"),
        pl.col("joint_ok").mean().alias("joint_acc"),
        *(pl.col(f"within_{k}").mean().alias(f"step_acc_pm{k}") for k in KS),
        mode_n.cast(pl.Int64).alias("mode_n"),
        pl.when(mode_n > 0)
        .then(pl.col("mode_ok").sum() / mode_n)
        .otherwise(None)
        .alias("mode_acc"),
        pl.col("abs_err").cast(pl.Float64).mean().alias("mean_abs_step_err"),
        pl.col("usable").sum().cast(pl.Int64).alias("n_parsed"),
        (~pl.col("usable")).mean().alias("parse_fail_rate"),
        pl.col("tokens").filter(has).cast(pl.Float64).mean().alias("tokens_per_traj"),
        pl.col("cost").filter(has).mean().alias("cost_per_traj"),
    )


def bootstrap_ci(
    hits: np.ndarray, counts: np.ndarray, n_boot: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile 95% interval of sum(hits)/sum(counts) resampling rows (clusters) with
    replacement. hits: (n, m) per cluster and metric; counts: (n, m). Vectorised: one
    (n_boot, n) multiplicity matrix, then a matrix product."""
    n = hits.shape[0]
    idx = rng.integers(0, n, size=(n_boot, n))
    flat = (np.arange(n_boot)[:, None] * n + idx).ravel()
    # float32 is exact here (integer sums far below 2**24) and halves the memory traffic
    weights = np.bincount(flat, minlength=n_boot * n).reshape(n_boot, n).astype(np.float32)
    num = (weights @ hits.astype(np.float32)).astype(np.float64)
    den = (weights @ counts.astype(np.float32)).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = num / den
    quantile = np.nanquantile if np.isnan(est).any() else np.quantile
    lo, hi = quantile(est, [0.025, 0.975], axis=0)
    return lo, hi


def _group_seed(seed: int, breakdown: str, group: str, split: str) -> np.random.Generator:
    """Seeded per group, so adding a breakdown never moves another group's interval."""
    return np.random.default_rng([seed, zlib.crc32(f"{breakdown}\0{group}\0{split}".encode())])


def _intervals(long: pl.DataFrame, n_boot: int, seed: int) -> pl.DataFrame:
    """Bootstrap over trajectories; every attributor of a group gets the same resamples
    (paired), so their intervals are comparable."""
    oks = [_OK[m] for m in BOOTSTRAPPED]
    rows: list[dict[str, Any]] = []
    keys = ("breakdown", "group", "split")
    narrow = long.select(*keys, "run_id", "attributor", *oks)  # partitions copy: keep it small
    for key, frame in narrow.partition_by(*keys, as_dict=True).items():
        breakdown, group, split = (str(k) for k in key)
        frame = frame.with_columns(
            (pl.col("run_id").rank("dense") - 1).alias("_r"),
            (pl.col("attributor").rank("dense") - 1).alias("_a"),
        )
        r, a = frame["_r"].to_numpy(), frame["_a"].to_numpy()
        n_runs, n_att = int(r.max()) + 1, int(a.max()) + 1
        hits = np.zeros((n_runs, n_att, len(oks)))
        counts = np.zeros((n_runs, n_att, len(oks)))
        np.add.at(hits, (r, a), frame.select(oks).to_numpy().astype(np.float64))
        np.add.at(counts, (r, a), 1.0)
        lo, hi = bootstrap_ci(
            hits.reshape(n_runs, -1),
            counts.reshape(n_runs, -1),
            n_boot,
            _group_seed(seed, breakdown, group, split),
        )
        lo, hi = lo.reshape(n_att, len(oks)), hi.reshape(n_att, len(oks))
        names = frame.select("_a", "attributor").unique().sort("_a")["attributor"].to_list()
        for i, name in enumerate(names):
            row = {"attributor": name, "breakdown": breakdown, "group": group, "split": split}
            for j, metric in enumerate(BOOTSTRAPPED):
                row[f"{metric}_lo"], row[f"{metric}_hi"] = float(lo[i, j]), float(hi[i, j])
            rows.append(row)
    schema = {c: pl.String for c in ("attributor", "breakdown", "group", "split")}
    schema |= {f"{m}_{s}": pl.Float64 for m in BOOTSTRAPPED for s in ("lo", "hi")}
    return pl.DataFrame(rows, schema=schema)


COLUMNS = (
    "attributor", "protocol", "family", "breakdown", "group", "split", "n", "n_items",
    "agent_acc", "agent_acc_lo", "agent_acc_hi",
    "step_acc", "step_acc_lo", "step_acc_hi",
    "joint_acc", "joint_acc_lo", "joint_acc_hi",
    *(f"step_acc_pm{k}" for k in KS),
    "mode_n", "mode_acc", "mean_abs_step_err", "n_parsed", "parse_fail_rate",
    "tokens_per_traj", "cost_per_traj",
)  # fmt: skip


def attribution_metrics(
    labels: pl.DataFrame,
    predictions: pl.DataFrame,
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    by: Sequence[str] = DEFAULT_BY,
    n_boot: int = 1000,
    seed: int = 0,
    attributor_info: Mapping[str, Mapping[str, str]] | None = None,
    length_edges: Sequence[int] = LENGTH_EDGES,
) -> pl.DataFrame:
    """One row per attributor x breakdown group x split, with 'all' roll-ups (breakdown
    'all'/group 'all' and split 'all'). Columns in `COLUMNS`: accuracies are shares of
    items; `mode_acc` over items whose gold mode is known; `mean_abs_step_err` over
    parsed predictions with a step; per-trajectory tokens (in + out) and cost are means
    over items with a prediction row; `*_lo`/`*_hi` are seeded percentile bootstrap 95%
    intervals over trajectories. Latency is wall-clock time, different on every run, so it
    lives in its own table (`analysis.scores.timing`), not here."""
    by = list(dict.fromkeys(by))
    for key in by:
        _parts(key)
    items = scored_items(labels, predictions, runs, steps, attributor_info, length_edges)
    if items.height == 0:
        return pl.DataFrame(schema=_empty_schema())
    long = _long(items, by)
    point = _point(long)
    ci = _intervals(long, n_boot, seed)
    out = point.join(ci, on=["attributor", "breakdown", "group", "split"], how="left")
    order = {"all": 0, **{k: i + 1 for i, k in enumerate(by)}}
    split_order = {"train": 0, "dev": 1, "test": 2, "unsplit": 3, "all": 4}
    return (
        out.with_columns(
            pl.col("breakdown").replace_strict(order, return_dtype=pl.Int64).alias("_b"),
            pl.col("split")
            .replace_strict(split_order, default=5, return_dtype=pl.Int64)
            .alias("_s"),
        )
        .with_columns(pl.col("group").str.extract(r"^(\d+)").cast(pl.Int64).alias("_g"))
        .sort("_b", "attributor", "_g", "group", "_s", nulls_last=True)
        .select(COLUMNS)
    )


def _empty_schema() -> dict[str, pl.DataType]:
    ints = {"n", "n_items", "mode_n", "n_parsed"}
    strs = {"attributor", "protocol", "family", "breakdown", "group", "split"}
    return {c: pl.String if c in strs else pl.Int64 if c in ints else pl.Float64 for c in COLUMNS}
