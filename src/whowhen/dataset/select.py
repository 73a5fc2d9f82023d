"""Which labelled items the dataset keeps, so that how an item was made cannot be read off
the data: at most one item per parent run in the evaluation splits (no sibling diff), and
gold steps spread over the run (no position prior).

Both are deterministic: ties and choices are broken by a hash of the run id and a seed.
"""

from __future__ import annotations

import math

import polars as pl

from whowhen.dataset.positions import gold_positions
from whowhen.schema import stable_id


def _order(frame: pl.DataFrame, seed: int) -> pl.DataFrame:
    """`frame` in a seeded order of its run ids (the same every build)."""
    keys = [stable_id("keep", seed, rid) for rid in frame["run_id"]]
    return frame.with_columns(pl.Series("_key", keys)).sort("_key").drop("_key")


def _bins(labels: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """Each item's position bin: the tenth of the run its gold sits in, and whether it is the
    run's last agent step."""
    return gold_positions(labels, steps).with_columns(
        (pl.col("rel_pos") * 10).floor().cast(pl.Int64).fill_null(0).alias("_tenth"),
        pl.col("is_last").fill_null(False),
    )


def cap_per_parent(
    labels: pl.DataFrame,
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    caps: dict[str, int | None],
    seed: int,
) -> pl.DataFrame:
    """At most `caps[split]` items per parent run in each split (None: no cap), so no
    evaluation item can be solved by diffing it against a sibling from the same run.

    Parents are visited in a seeded order, and each keeps the items whose position bin is
    so far the least filled in its split: the choice also spreads the gold positions."""
    items = _order(
        _bins(labels, steps).join(runs.select("run_id", "parent_run_id"), on="run_id", how="left"),
        seed,
    )
    keep: list[str] = []
    for (split,), group in items.group_by("split", maintain_order=True):
        cap = caps.get(str(split))
        if cap is None:
            keep += group["run_id"].to_list()
            continue
        filled: dict[tuple[int, bool], int] = {}
        for _, sibs in group.group_by("parent_run_id", maintain_order=True):
            ranked = sorted(
                enumerate(sibs.iter_rows(named=True)),
                key=lambda ir: (filled.get((ir[1]["_tenth"], ir[1]["is_last"]), 0), ir[0]),
            )
            for _, row in ranked[:cap]:
                key = (row["_tenth"], row["is_last"])
                filled[key] = filled.get(key, 0) + 1
                keep.append(row["run_id"])
    return labels.filter(pl.col("run_id").is_in(keep))


def _capacity(nonlast: list[int], last: list[int], n: int, tenth: float, last_share: float) -> int:
    """How many items can be kept out of a target of `n` when no tenth holds more than
    `tenth` of `n` and last-step golds at most `last_share` of `n`."""
    per_bin = max(1, math.floor(tenth * n + 1e-9))
    kept_nonlast, want_last = 0, 0
    for a, b in zip(nonlast, last, strict=True):
        k = min(a + b, per_bin)
        kept_nonlast += min(a, k)
        want_last += k - min(a, k)
    return kept_nonlast + min(want_last, max(1, math.floor(last_share * n + 1e-9)))


def spread_positions(
    labels: pl.DataFrame,
    steps: pl.DataFrame,
    tenth_share: float,
    last_share: float,
    seed: int,
    by: tuple[str, ...] = ("split",),
) -> pl.DataFrame:
    """Keep the largest set of items, per group `by`, in which no tenth of the run (gold
    index / agent steps) holds more than `tenth_share` and the last agent step at most
    `last_share`: a predictor that reads only where a step sits then gains little. One
    item per tenth (and one last-step gold) is always allowed, so a small split is thinned,
    never emptied."""
    pos = _bins(labels, steps)
    keep: list[str] = []
    for _, group in pos.group_by(*by, maintain_order=True):
        keep += _spread_group(_order(group, seed), tenth_share, last_share)
    return labels.filter(pl.col("run_id").is_in(keep))


def _spread_group(group: pl.DataFrame, tenth_share: float, last_share: float) -> list[str]:
    nonlast = [group.filter((pl.col("_tenth") == t) & ~pl.col("is_last")) for t in range(10)]
    last = [group.filter((pl.col("_tenth") == t) & pl.col("is_last")) for t in range(10)]
    counts_n, counts_l = [f.height for f in nonlast], [f.height for f in last]
    n = group.height
    while n > 0 and _capacity(counts_n, counts_l, n, tenth_share, last_share) < n:
        n -= 1
    per_bin = max(1, math.floor(tenth_share * n + 1e-9))
    last_left = max(1, math.floor(last_share * n + 1e-9))
    keep: list[str] = []
    for a, b in zip(nonlast, last, strict=True):
        k = min(a.height + b.height, per_bin)
        keep += a["run_id"].head(k).to_list()
        extra = min(k - min(a.height, k), last_left)
        keep += b["run_id"].head(extra).to_list()
        last_left -= extra
    return keep
