"""The report's built-versus-real comparison: run shapes and per-feature lifts, and the
line saying what tracer-lite learned from."""

from __future__ import annotations

import polars as pl

from whowhen.analysis.imported import fitted_on
from whowhen.analysis.transfer import BUILT, lift_table, run_shapes
from whowhen.attribution.tracer import TracerConfig
from whowhen.attribution.tracer_train import Tables, fit_tracer

from .tracer_data import positional_runs


def _both() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    built, real = positional_runs(40, "built", True), positional_runs(10, "real", False)
    return tuple(pl.concat([built[t], real[t]]) for t in ("runs", "steps", "labels"))


def test_shapes_show_where_the_gold_steps_sit() -> None:
    runs, steps, labels = _both()
    shapes = run_shapes(runs, steps, labels, ["built"])
    rows = {r["group"]: r for r in shapes.iter_rows(named=True)}
    assert list(rows) == [BUILT, "real"]
    assert rows[BUILT]["runs"] == 20  # the train split only
    assert rows[BUILT]["gold_rel_pos"] == 0.0 and rows["real"]["gold_rel_pos"] == 1.0
    assert rows["real"]["agent_steps_median"] == 6
    assert rows["real"]["non_agent_share"] == round(1 - 6 / 7, 3)  # the task is no agent's


def test_lifts_flag_a_cue_that_points_the_other_way() -> None:
    built, real = positional_runs(40, "built", True), positional_runs(10, "real", False)
    fitted = fit_tracer(
        Tables(built["runs"], built["steps"], built["labels"]),
        {"real": Tables(real["runs"], real["steps"], real["labels"])},
        TracerConfig.of(iterations=5),
        folds=2,
    )
    assert set(fitted.lifts["n_runs"]) == {20, 10}  # the built train split; every real run
    lifts = {r["feature"]: r for r in lift_table(fitted.lifts).to_dicts()}
    assert lifts["is_first"][BUILT] == 1.0 and lifts["is_first"]["real"] == -0.2
    assert lifts["is_first"]["same_sign"] is False
    assert lifts["rel_pos"][BUILT] < 0 < lifts["rel_pos"]["real"]


def test_the_report_says_what_tracer_lite_learned_from() -> None:
    said = fitted_on({"built": 868, "who_and_when_dev": 92})
    assert "built (868 labelled runs), who_and_when_dev (92 labelled runs)" in said
    assert "out of fold" in said
    assert fitted_on({}) == "tracer_lite was fitted on the built train split only."
    assert "out of fold" not in fitted_on({"built": 868, "absent": 0})  # an optional import
