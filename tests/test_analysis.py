from __future__ import annotations

import json

import polars as pl
import pytest

from whowhen.analysis import accuracy, accuracy_figure, funnel, metrics, render_report

LABELS = pl.DataFrame(
    {
        "run_id": ["a", "b", "c", "d"],
        "decisive_agent": ["x", "x", "y", "y"],
        "decisive_step": [1, 10, 3, 5],
        "split": ["test", "test", "train", "test"],
    }
)


def _preds(name: str, agents: list, steps: list) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "run_id": ["a", "b", "c", "d"],
            "attributor": [name] * 4,
            "agent": agents,
            "step": steps,
            "cost_usd": [0.0] * 4,
        },
        schema_overrides={"step": pl.Int64},
    )


def test_exact_step_matching_is_not_substring() -> None:
    # gold step 1 vs predicted 10 and gold 10 vs predicted 1: both wrong (the Who&When
    # scorer's substring match would count them right)
    preds = _preds("p", ["x", "x", "y", "x"], [10, 1, 3, None])
    acc = accuracy(LABELS, preds, tolerance=2).filter(pl.col("split") == "all").row(0, named=True)
    assert acc["n"] == 4
    assert acc["agent_acc"] == pytest.approx(0.75)
    assert acc["step_acc"] == pytest.approx(0.25)  # only c; a missing step counts as wrong
    assert acc["step_acc_pmk"] == pytest.approx(0.25)
    assert acc["step_acc_lo"] < 0.25 < acc["step_acc_hi"]


def test_tolerance_and_splits() -> None:
    preds = _preds("q", ["x", "x", "y", "y"], [2, 12, 3, 5])
    acc = accuracy(LABELS, preds, tolerance=2)
    rows = {r["split"]: r for r in acc.iter_rows(named=True)}
    assert set(rows) == {"all", "test", "train"}
    assert rows["all"]["step_acc"] == pytest.approx(0.5)
    assert rows["all"]["step_acc_pm1"] == pytest.approx(0.75)
    assert rows["all"]["step_acc_pmk"] == pytest.approx(1.0)
    assert rows["test"]["n"] == 3 and rows["train"]["step_acc"] == 1.0


def test_funnel_metrics_figure_and_report(tmp_path) -> None:
    cont = pl.DataFrame(
        {
            "benchmark": ["b"] * 3,
            "system": ["s"] * 3,
            "mode": ["m", "m", "n"],
            "status": ["flipped", "recovered", "invalid"],
            "prefix_exact": [True, True, False],
        }
    )
    fun = funnel(cont)
    assert fun.select("mode", "flipped", "recovered", "invalid").rows() == [
        ("m", 1, 1, 0),
        ("n", 0, 0, 1),
    ]
    acc = accuracy(LABELS, _preds("p", ["x"] * 4, [1, 10, 3, 5]), 2)
    runs = pl.DataFrame({"run_id": ["a", "b", "c", "d"], "system": ["s"] * 4})
    m = metrics(acc, fun, LABELS, runs)
    assert m["injection"] == {
        "injections": 3,
        "flipped": 1,
        "recovered": 1,
        "invalid": 1,
        "prefix_fidelity": pytest.approx(2 / 3, abs=1e-6),
    }
    assert m["attribution"]["p/all"]["step_acc"] == 1.0
    json.dumps(m)
    fig = accuracy_figure(acc, tmp_path / "fig.png")
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = render_report(m, acc, fun, fig, "tiny")
    assert "data:image/png;base64," in html and "<table>" in html and "66.7%" in html
