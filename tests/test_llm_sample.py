"""A paid or slow attributor predicts a seeded, stratified sample of the items."""

from __future__ import annotations

import polars as pl

from whowhen.attribution.stage import sample_runs


def _data() -> tuple[pl.DataFrame, pl.DataFrame]:
    ids = [f"r{i:02d}" for i in range(40)]
    bench = ["a"] * 30 + ["b"] * 10
    split = ["test" if i % 2 else "train" for i in range(40)]
    runs = pl.DataFrame({"run_id": ids, "benchmark": bench})
    labels = pl.DataFrame({"run_id": ids, "split": split})
    return runs, labels


def test_the_sample_is_seeded_from_the_test_split_and_stratified() -> None:
    runs, labels = _data()
    sample = sample_runs(runs, labels, 8, seed=3)
    assert sample.height == 8
    assert set(sample["run_id"]) <= set(labels.filter(pl.col("split") == "test")["run_id"])
    assert dict(sample.group_by("benchmark").len().rows()) == {"a": 6, "b": 2}  # 15:5 test
    assert sample.equals(sample_runs(runs, labels, 8, seed=3))
    assert not sample.equals(sample_runs(runs, labels, 8, seed=4))


def test_a_small_dataset_is_taken_whole() -> None:
    runs, labels = _data()
    assert sample_runs(runs, labels, 100, seed=3).height == 20  # the whole test split
    no_test = labels.with_columns(pl.lit("train").alias("split"))
    assert sample_runs(runs, no_test, 100, seed=3).height == 40  # no test split: all
