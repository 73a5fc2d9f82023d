"""Seeded, stratified samples for paid or slow model roles (attributors, the annotator,
the error generator): the same share of each benchmark, the same rows on every rerun."""

from __future__ import annotations

import polars as pl

from whowhen.schema import stable_id


def stratified_sample(
    frame: pl.DataFrame, size: int, seed: int, by: str = "benchmark"
) -> pl.DataFrame:
    """`size` rows of `frame` (all of them when it has no more), each `by` group getting
    its share in proportion to its rows (largest remainders), the rows within a group
    drawn by a hash of (seed, run_id); in `frame`'s order."""
    if frame.height <= size:
        return frame
    counts = dict(frame.group_by(by).len().sort(by).rows())
    quota = {g: size * n // frame.height for g, n in counts.items()}
    for g in sorted(counts, key=lambda g: (-(size * counts[g] % frame.height), g))[
        : size - sum(quota.values())
    ]:
        quota[g] += 1
    keyed = frame.with_columns(
        pl.col("run_id").map_elements(lambda r: stable_id("sample", seed, r), pl.String).alias("_k")
    ).sort(by, "_k")
    keep = [
        r
        for (g,), part in keyed.group_by(by, maintain_order=True)
        for r in part["run_id"].head(quota[g]).to_list()
    ]
    return frame.filter(pl.col("run_id").is_in(keep))
