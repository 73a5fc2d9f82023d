from __future__ import annotations

import polars as pl
import pytest

from whowhen.attribution.baselines import agent_steps
from whowhen.attribution.offline import attribute
from whowhen.errors import WhowhenError

from .helpers import pipeline


@pytest.fixture(scope="module")
def data():
    return pipeline("solver_verifier")


def test_baselines_predict_agent_steps(data) -> None:
    runs, steps = data["runs"], data["steps"]
    cands = agent_steps(steps)
    for name in ("random", "first_agent_step", "last_agent_step"):
        pred = attribute(runs, steps, name, seed=1)
        assert pred.height == runs.height and pred["parse_ok"].all()
        joined = pred.join(cands, left_on=["run_id", "step"], right_on=["run_id", "step"])
        assert joined.height == pred.height and (joined["agent"] == joined["actor"]).all()
    first = attribute(runs, steps, "first_agent_step", 1)
    assert (first["step"] == 1).all()  # step 0 is the task, step 1 the first agent action
    last = attribute(runs, steps, "last_agent_step", 1)
    assert (last["agent"] == "verifier").all()


def test_random_is_seeded(data) -> None:
    a = attribute(data["runs"], data["steps"], "random", 1)
    assert a.equals(attribute(data["runs"], data["steps"], "random", 1))
    assert not a["step"].equals(attribute(data["runs"], data["steps"], "random", 2)["step"])


def test_run_without_agent_steps_gets_an_empty_prediction(data) -> None:
    runs = pl.concat(
        [data["runs"], data["runs"].head(1).with_columns(pl.lit("lonely").alias("run_id"))]
    )
    pred = attribute(runs, data["steps"], "last_agent_step", 1)
    row = pred.filter(pl.col("run_id") == "lonely").row(0, named=True)
    assert row["step"] is None and not row["parse_ok"]


def test_unknown_attributor(data) -> None:
    with pytest.raises(WhowhenError, match="unknown attributor"):
        attribute(data["runs"], data["steps"], "oracle", 1)


def test_random_baseline_matches_its_analytic_expectation() -> None:
    """The seeded random attributor's measured accuracy, pooled over ten seeds, lies within
    its Wilson interval of the analytic expectation, on a built dataset of a few hundred
    items."""
    from whowhen.analysis import accuracy, random_expected
    from whowhen.continuation import continue_injections
    from whowhen.dataset.audit import wilson
    from whowhen.dataset.build import build_dataset
    from whowhen.injection.plan import plan_injections
    from whowhen.rollouts import run_rollouts
    from whowhen.taxonomy import load_taxonomy

    from .conftest import MAX_STEPS, ROOT

    tax = load_taxonomy(ROOT / "config" / "taxonomy.yaml")
    parts = []
    for bench, system in [("arithmetic", "solver_verifier"), ("doc_qa", "orchestrator")]:
        runs, steps, _ = run_rollouts(bench, system, {"n_tasks": 40}, 3, 0.0, MAX_STEPS)
        plan = plan_injections(runs, steps, tax, 5, 4)
        parts.append(continue_injections(plan, runs, steps, {"n_tasks": 40}, 3, 100))
    data = build_dataset(parts, 1, 0.6, 0.2)
    assert data["labels"].height >= 150
    expected = (
        random_expected(data["labels"], data["runs"], data["steps"])
        .filter((pl.col("dataset") == "all") & (pl.col("split") == "all"))
        .row(0, named=True)
    )
    # pooled over ten seeds: one seed's few hundred items leave a 1-in-20 chance of a miss
    n = data["labels"].height
    hits = {"agent": 0.0, "step": 0.0}
    for seed in range(11, 21):
        preds = attribute(data["runs"], data["steps"], "random", seed)
        acc = (
            accuracy(data["labels"], preds, data["runs"], 3)
            .filter((pl.col("dataset") == "all") & (pl.col("split") == "all"))
            .row(0, named=True)
        )
        for level in hits:
            hits[level] += acc[f"{level}_acc"] * n
    for level, k in hits.items():
        lo, hi = wilson(round(k), 10 * n)
        assert lo <= expected[f"expected_{level}_acc"] <= hi, (level, lo, hi, expected)
    assert 0 < expected["expected_step_acc"] < expected["expected_agent_acc"] < 1
