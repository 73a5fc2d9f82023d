"""tracer-lite learning from built and imported labels: the imported share of the loss
decides whose pattern the model follows, imported runs are predicted out of fold, and the
agent it names is the one holding the most probability."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from whowhen.attribution.tracer import TracerConfig, TracerModel, likeliest_agent, predict
from whowhen.attribution.tracer_train import Tables, fit_tracer

from .tracer_data import positional_runs

CONFIG = TracerConfig.of(iterations=150)


def _tables(data: dict) -> Tables:
    return Tables(data["runs"], data["steps"], data["labels"])


@pytest.fixture(scope="module")
def worlds() -> tuple[Tables, Tables]:
    """Built runs fail at their first agent step (80 train), imported ones at their last
    (20 runs): the two disagree, and only the weighting can settle whose pattern wins."""
    return _tables(positional_runs(160, "built", True)), _tables(
        positional_runs(20, "real", False, seed=1)
    )


def _share_last(model: TracerModel, real: Tables) -> float:
    preds = predict(model, real.runs, real.steps)
    return float((preds["step"] == 6).mean())


def test_the_imported_share_decides_whose_pattern_the_model_follows(worlds) -> None:
    built, real = worlds
    heavy = fit_tracer(built, {"real": real}, CONFIG, share=0.8, folds=2)
    light = fit_tracer(built, {"real": real}, CONFIG, share=0.05, folds=2)
    assert _share_last(heavy.model, real) == 1.0  # 20 real labels carry 80% of the loss
    assert _share_last(light.model, real) == 0.0  # ... and 5%: the 80 built ones win
    assert _share_last(heavy.built_model, real) == 0.0  # the built-only model never saw them
    assert heavy.model.trained_on == {"built": 80, "real": 20}
    assert heavy.built_model.trained_on == {"built": 80}
    assert heavy.built_model.name == "tracer_lite_built"


def test_imported_runs_are_predicted_out_of_fold(worlds) -> None:
    """Each real run is predicted by a model that never saw its label: with the real data
    alone and two folds, each fold's model learned from the other ten runs only."""
    built, real = worlds
    fitted = fit_tracer(built, {"real": real}, CONFIG, use_built=False, folds=2)
    assert sorted(fitted.held_out["run_id"]) == sorted(real.runs["run_id"])
    assert (fitted.held_out["step"] == 6).all()  # the pattern, learned from other runs
    assert fitted.model.trained_on == {"real": 20}


def test_the_tracer_attributor_swaps_in_out_of_fold_predictions(worlds, tmp_path) -> None:
    from whowhen.attribution.kinds import ATTRIBUTORS, AttributorContext
    from whowhen.attribution.tracer import held_out_path
    from whowhen.schema import PREDICTIONS, write_table

    built, real = worlds
    fitted = fit_tracer(built, {"real": real}, CONFIG, share=0.8, folds=2)
    path = fitted.model.save(tmp_path / "tracer_lite.json")
    planted = fitted.held_out.with_columns(pl.lit(3).alias("step"))  # marks them
    write_table(planted, PREDICTIONS, held_out_path(path))
    run = ATTRIBUTORS.get("tracer_lite").make(AttributorContext({}, str(path)))
    both = pl.concat([built.runs.head(4), real.runs])
    out = run(both, pl.concat([built.steps, real.steps]))
    swapped = out.filter(pl.col("run_id").str.starts_with("real"))
    assert (swapped["step"] == 3).all() and swapped.height == 20
    assert (out.filter(pl.col("run_id").str.starts_with("built"))["step"] != 3).all()


def test_the_likeliest_agent_may_not_own_the_top_step() -> None:
    """Three middling steps of the solver outweigh the planner's single best step."""
    agent, mass = likeliest_agent(
        ["planner", "solver", "solver", "solver"], np.log(np.array([0.4, 0.2, 0.2, 0.2]))
    )
    assert agent == "solver" and mass == pytest.approx(0.6)
    assert likeliest_agent(["a", "b"], np.zeros(2)) == ("a", 0.5)  # a tie: the first to act


def test_an_import_learned_from_is_marked_in_its_entry(tiny_config) -> None:
    """`train` belongs to the import, so a profile that replaces `imports` drops it too."""
    from whowhen.config import validate_config
    from whowhen.errors import WhowhenError

    entry = {"name": "mine", "format": "jsonl", "path": "x.jsonl"}
    tiny_config["imports"] = [dict(entry)]
    assert validate_config(tiny_config)["imports"][0]["train"] is False
    tiny_config["imports"] = [{**entry, "train": "yes"}]
    with pytest.raises(WhowhenError, match=r"imports\.0\.train"):
        validate_config(tiny_config)


def test_the_built_only_attributor_finds_its_model_beside_the_pipelines(worlds, tmp_path) -> None:
    """The feedback stage hands every tracer attributor the pipeline's `tracer_lite.json`;
    `tracer_lite_built` then reads `tracer_lite_built.json` beside it."""
    from whowhen.attribution.kinds import ATTRIBUTORS, AttributorContext

    built, real = worlds
    fitted = fit_tracer(built, {"real": real}, CONFIG, share=0.8, folds=2)
    fitted.model.save(tmp_path / "tracer_lite.json")
    fitted.built_model.save(tmp_path / "tracer_lite_built.json")
    ctx = AttributorContext({}, str(tmp_path / "tracer_lite.json"))
    out = ATTRIBUTORS.get("tracer_lite_built").make(ctx)(real.runs, real.steps)
    assert set(out["attributor"]) == {"tracer_lite_built"} and (out["step"] == 1).all()


def test_nothing_to_learn_from_is_a_result(worlds) -> None:
    """A dataset whose model never succeeded has no train split: the fit says it learned
    nothing and writes empty tables, it does not crash."""
    built, _ = worlds
    none = Tables(built.runs, built.steps, built.labels.clear())
    fitted = fit_tracer(none, {}, CONFIG)
    assert fitted.model.n_train_runs == 0 and fitted.lifts.is_empty()
    assert fitted.held_out.is_empty()
