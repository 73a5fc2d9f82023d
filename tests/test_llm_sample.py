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


def test_the_annotator_reads_a_sample_of_the_failures() -> None:
    from whowhen.models import make_client
    from whowhen.rollouts import run_rollouts
    from whowhen.taxonomy import load_taxonomy
    from whowhen.taxonomy_stage import annotate_failures

    from .conftest import ROOT

    runs, steps, _ = run_rollouts("arithmetic", "react", {"n_tasks": 40}, 2, 0.3, 300)
    failed = runs.filter(~pl.col("success")).height
    assert failed > 3
    client = make_client("scripted/standin", {"progress": False, "cache_dir": None}, {})
    taxonomy = load_taxonomy(ROOT / "config/taxonomy.yaml")
    sample = annotate_failures(runs, steps, taxonomy, client, (3, 1))
    assert sample.height == 3 and client.stats.calls == 3
    assert annotate_failures(runs, steps, taxonomy, client).height == failed


def test_the_generator_writes_the_errors_of_a_sample_of_runs() -> None:
    from whowhen.injection.plan import plan_injections, programmatic
    from whowhen.injection.stage import ForRuns
    from whowhen.rollouts import run_rollouts
    from whowhen.taxonomy import load_taxonomy

    from .conftest import ROOT

    runs, steps, _ = run_rollouts("arithmetic", "react", {"n_tasks": 8}, 2, 0.0, 300)
    asked: set[str] = set()

    def model(original, mode, context, rng):
        asked.add(context[0]["run_id"])
        return programmatic(original, mode, context, rng)

    chosen = frozenset(runs["run_id"].head(2).to_list())
    taxonomy = load_taxonomy(ROOT / "config/taxonomy.yaml")
    plan_injections(runs, steps, taxonomy, 3, 2, generator=ForRuns(model, chosen))
    assert asked == chosen


def test_a_sampled_llm_attributor_is_scored_on_its_sample_and_others_on_every_run() -> None:
    """Scoring counts a missing prediction as wrong, except for an LLM attributor the
    config ran on a sample: the runs it was never asked about are not its errors."""
    from whowhen.analysis.stage import stage_accuracy
    from whowhen.schema import LABELS, PREDICTIONS, RUNS, to_arrow

    ids = [f"r{i}" for i in range(4)]
    runs = pl.from_arrow(
        to_arrow(
            [
                {"run_id": r, "benchmark": "a", "task_id": r, "modality": "text",
                 "system": "s", "topology": "single", "policy": "p", "seed": 0,
                 "origin": "injected", "success": False, "n_steps": 3}
                for r in ids
            ],
            RUNS,
        )
    )  # fmt: skip
    labels = pl.from_arrow(
        to_arrow(
            [{"run_id": r, "decisive_agent": "x", "decisive_step": 1, "source": "injection",
              "split": "test"} for r in ids],
            LABELS,
        )
    )  # fmt: skip
    preds = pl.from_arrow(
        to_arrow(
            [{"run_id": r, "attributor": name, "agent": "x", "step": 1, "parse_ok": True}
             for name in ("random", "llm") for r in ids[:2]],
            PREDICTIONS,
        )
    )  # fmt: skip
    attribution = {"llm": [{"name": "llm"}], "llm_sample": 2}
    acc = stage_accuracy(labels, preds, runs, 1, attribution)
    row = {r["attributor"]: r for r in acc.filter(pl.col("dataset") == "all").iter_rows(named=True)
           if r["split"] == "all"}  # fmt: skip
    assert (row["random"]["n"], row["random"]["step_acc"], row["random"]["missing"]) == (4, 0.5, 2)
    assert (row["llm"]["n"], row["llm"]["step_acc"]) == (2, 1.0)
    unsampled = stage_accuracy(labels, preds, runs, 1, {"llm": [{"name": "llm"}]})
    assert unsampled.filter(pl.col("attributor") == "llm")["n"].max() == 4
