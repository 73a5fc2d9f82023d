from __future__ import annotations

import polars as pl

from whowhen.continuation import continue_injections
from whowhen.dataset.build import assign_splits

from .helpers import drifting_arithmetic, pipeline


def test_statuses_and_labels_for_the_multi_agent_system() -> None:
    out = pipeline("solver_verifier")
    cont = out["cont_continuations"]
    assert cont.height == out["injections"].height > 0
    assert cont["prefix_exact"].all()
    status = dict(
        cont.group_by("mode", "status")
        .len()
        .select(pl.concat_str("mode", "status", separator="/"), "len")
        .rows()
    )
    # the verifier checks operators: a wrong operator is always caught (a recovery) ...
    assert status.get("reasoning.wrong_operator/recovered", 0) > 0
    assert "reasoning.wrong_operator/flipped" not in status
    # ... but a mistyped argument slips through
    assert status.get("action.wrong_tool_argument/flipped", 0) > 0
    labels = out["cont_labels"]
    assert labels.height == (cont["status"] == "flipped").sum()
    runs = out["cont_runs"]
    flipped = runs.join(labels, on="run_id")
    assert (~flipped["success"]).all() and (flipped["origin"] == "injected").all()


def test_label_points_at_the_replaced_step() -> None:
    out = pipeline("react")
    steps, inj = out["cont_steps"], out["injections"]
    labels = (
        out["cont_labels"]
        .join(out["cont_continuations"].select("run_id", "injection_id"), on="run_id")
        .join(inj, on="injection_id")
    )
    assert labels.height > 0
    for row in labels.iter_rows(named=True):
        step = steps.filter(
            (pl.col("run_id") == row["run_id"]) & (pl.col("step") == row["decisive_step"])
        ).row(0, named=True)
        assert step["actor"] == row["decisive_agent"]
        assert step["kind"] in ("action", "message")  # a note or a message can be gold too
        assert row["decisive_step"] == row["step"]


def test_missing_parent_is_invalid_not_fatal() -> None:
    out = pipeline("react")
    inj = out["injections"]
    broken = inj.with_columns(
        pl.when(pl.int_range(pl.len()) == 0)
        .then(pl.lit("ghost"))
        .otherwise(pl.col("parent_run_id"))
        .alias("parent_run_id")
    )
    res = continue_injections(
        broken,
        out["rollout_runs"],
        out["rollout_steps"],
        {"n_tasks": 6, "min_ops": 3, "max_ops": 4},
        5,
        80,
    )
    cont = res["continuations"]
    assert (cont["status"] == "invalid").sum() == 1
    assert cont.filter(pl.col("status") == "invalid")["reason"][0].startswith("parent run ghost")
    assert (cont["status"] != "invalid").sum() == inj.height - 1


def test_splits_are_by_task() -> None:
    out = pipeline("solver_verifier")
    labels = assign_splits(out["labels"], out["runs"], seed=1, train_fraction=0.5)
    per_task = (
        labels.join(out["runs"].select("run_id", "task_id"), on="run_id")
        .group_by("task_id")
        .agg(pl.col("split").n_unique())
    )
    assert (per_task["split"] == 1).all()
    # one benchmark, its n tasks in a seeded order: task i trains iff (i + 0.5) / n < 0.5,
    # so exactly n // 2 tasks train and the other n - n // 2 test (no dev at fraction 0)
    assert set(out["runs"]["benchmark"]) == {"arithmetic"}
    n = out["runs"]["task_id"].n_unique()
    tasks_per_split = dict(
        labels.join(out["runs"].select("run_id", "task_id"), on="run_id")
        .group_by("split")
        .agg(pl.col("task_id").n_unique())
        .rows()
    )
    assert n >= 2 and tasks_per_split == {"train": n // 2, "test": n - n // 2}


def test_drifting_environment_makes_injections_invalid(monkeypatch) -> None:
    out = pipeline("react")
    drifting_arithmetic(monkeypatch)
    # the recorded runs came from the deterministic env; replay now drifts at the first
    # calculator observation that lies inside the prefix
    res = continue_injections(
        out["injections"],
        out["rollout_runs"],
        out["rollout_steps"],
        {"n_tasks": 6, "min_ops": 3, "max_ops": 4},
        5,
        80,
    )
    cont = res["continuations"]
    # (step 1 is the agent's plan, step 2 its first calculation)
    inside = cont.filter(pl.col("prefix_len") > 3)
    assert inside.height > 0
    assert (inside["status"] == "invalid").all() and (~inside["prefix_exact"]).all()
    assert (inside["first_mismatch_step"] == 3).all()
    assert inside["reason"].str.starts_with("prefix drift").all()
    assert res["labels"].join(inside, on="run_id").height == 0


def test_injections_after_a_recovered_slip_are_flagged() -> None:
    """A successful parent may hold a natural slip its system recovered from; an injection
    after it is kept but flagged (earlier_error_step, and the label's reason says so)."""
    from whowhen.injection.plan import plan_injections
    from whowhen.rollouts import run_rollouts
    from whowhen.taxonomy import load_taxonomy

    from .conftest import MAX_STEPS, ROOT

    runs, steps, slips = run_rollouts(
        "arithmetic", "solver_verifier", {"n_tasks": 40}, 2, 0.1, MAX_STEPS
    )
    plan = plan_injections(runs, steps, load_taxonomy(ROOT / "config/taxonomy.yaml"), 3, 3)
    out = continue_injections(plan, runs, steps, {"n_tasks": 40}, 2, MAX_STEPS, slips=slips)
    cont = out["continuations"].join(
        plan.select("injection_id", pl.col("step").alias("t")), on="injection_id"
    )
    first = slips.group_by("run_id").agg(pl.col("step").min().alias("first_slip"))
    joined = cont.join(first, left_on="parent_run_id", right_on="run_id", how="left")
    expected = joined["first_slip"].is_not_null() & (joined["first_slip"] < joined["t"])
    assert expected.sum() > 0
    assert (joined["earlier_error_step"].is_not_null() == expected).all()
    flagged = set(joined.filter(expected)["run_id"])
    labels = out["labels"]
    assert (
        labels.filter(pl.col("run_id").is_in(flagged))["reason"]
        .str.contains("recovered error at step")
        .all()
    )
    assert labels.filter(~pl.col("run_id").is_in(flagged))["reason"].is_null().all()


def test_single_error_keeps_only_runs_without_an_earlier_slip() -> None:
    from whowhen.dataset.build import build_dataset
    from whowhen.injection.plan import plan_injections
    from whowhen.rollouts import run_rollouts
    from whowhen.taxonomy import load_taxonomy

    from .conftest import MAX_STEPS, ROOT

    runs, steps, slips = run_rollouts("doc_qa", "orchestrator", {"n_tasks": 40}, 2, 0.1, MAX_STEPS)
    plan = plan_injections(runs, steps, load_taxonomy(ROOT / "config/taxonomy.yaml"), 3, 3)
    part = continue_injections(plan, runs, steps, {"n_tasks": 40}, 2, MAX_STEPS, slips=slips)
    # a recovered researcher slip before the injected step: flagged, and flipped here
    everything = build_dataset([part], 1, 0.6)["labels"]
    single = build_dataset([part], 1, 0.6, single_error=True)["labels"]
    flagged = set(
        part["continuations"].filter(pl.col("earlier_error_step").is_not_null())["run_id"]
    )
    assert flagged & set(everything["run_id"])
    assert set(single["run_id"]) == set(everything["run_id"]) - flagged
    assert single["reason"].is_null().all()


def test_rerollout_share_compares_a_seeded_sample() -> None:
    from whowhen.config import load_config
    from whowhen.continuation import _share
    from whowhen.injection.plan import plan_injections
    from whowhen.rollouts import run_rollouts
    from whowhen.taxonomy import load_taxonomy

    from .conftest import ROOT, TINY

    bench = TINY["benchmarks"]["arithmetic"]
    runs, steps, _ = run_rollouts("arithmetic", "react", bench, TINY["seed"], 0.0, 80)
    tax = load_taxonomy(ROOT / "config" / "taxonomy.yaml")
    inj = plan_injections(runs, steps, tax, 7, 4)

    def compared(share: float) -> set[str]:
        out = continue_injections(
            inj, runs, steps, bench, 5, 80, rerollout_slip_rate=0.05, rerollout_share=share
        )["continuations"]
        return set(out.filter(pl.col("rerollout_status").is_not_null())["injection_id"])

    every, half = compared(1.0), compared(0.5)
    assert len(every) == inj.height > 10
    assert 0.2 * inj.height < len(half) < 0.8 * inj.height and half < every
    assert compared(0.5) == half  # the same sample each time
    assert (_share(True), _share(False), _share(0.25)) == (1.0, 0.0, 0.25)
    assert load_config(ROOT / "config/config.yaml")["continuation"]["rerollout"] == 0.25
