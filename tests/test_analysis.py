from __future__ import annotations

import json

import polars as pl
import pytest

from whowhen.analysis import (
    accuracy,
    funnel,
    metrics,
    natural_failures_html,
    random_expected,
    render_report,
)
from whowhen.analysis.figures import accuracy_figure, modes_figure
from whowhen.attribution.offline import attribute

LABELS = pl.DataFrame(
    {
        "run_id": ["a", "b", "c", "d"],
        "decisive_agent": ["x", "x", "y", "y"],
        "decisive_step": [1, 10, 3, 5],
        "split": ["test", "test", "train", "test"],
    }
)
RUNS = pl.DataFrame(
    {
        "run_id": ["a", "b", "c", "d"],
        "benchmark": ["b1", "b1", "b2", "b2"],
        "subset": [None, None, "s", "s"],
        "system": ["m"] * 4,
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


def _row(acc: pl.DataFrame, dataset: str = "all", split: str = "all") -> dict:
    return acc.filter((pl.col("dataset") == dataset) & (pl.col("split") == split)).row(
        0, named=True
    )


def test_exact_step_matching_is_not_substring() -> None:
    # gold step 1 vs predicted 10: wrong when exact, right for the Who&When substring scorer
    preds = _preds("p", ["x (thought)", "x", "y", "xy"], [10, 1, 3, None])
    acc = _row(accuracy(LABELS, preds, RUNS, tolerance=2))
    assert acc["n"] == 4
    assert acc["agent_acc"] == pytest.approx(0.5)  # b and c
    assert acc["step_acc"] == pytest.approx(0.25)  # only c; a missing step counts as wrong
    assert acc["step_acc_substring"] == pytest.approx(0.5)  # a ("1" in "10") and c
    # the compat scorer reads the first word ("x (thought)" -> "x") and matches substrings
    # (gold "y" is in "xy"), so it counts all four
    assert acc["agent_acc_substring"] == pytest.approx(1.0)
    assert acc["step_acc_lo"] < 0.25 < acc["step_acc_hi"]


def test_groups_tolerance_and_splits() -> None:
    preds = _preds("q", ["x", "x", "y", "y"], [2, 12, 3, 5])
    acc = accuracy(LABELS, preds, RUNS, tolerance=2)
    assert _row(acc)["step_acc"] == pytest.approx(0.5)
    assert _row(acc)["step_acc_pm1"] == pytest.approx(0.75)
    assert _row(acc)["step_acc_pmk"] == pytest.approx(1.0)
    assert _row(acc, split="test")["n"] == 3
    assert _row(acc, "b2/s")["step_acc"] == 1.0 and _row(acc, "b2/s")["n"] == 2
    assert _row(acc, "b1", "test")["step_acc"] == 0.0


def test_random_expectation_matches_simulation() -> None:
    steps = pl.DataFrame(
        {
            "run_id": ["a"] * 4 + ["b"] * 3 + ["c"] * 2 + ["d"] * 6,
            "step": [0, 1, 2, 3, 0, 1, 2, 0, 1, *range(6)],
            "actor": ["user", "x", "z", "x", "x", "y", "x", "user", "y", *"zyzzyz"],
            "kind": ["message"] * 15,
        }
    )
    labels = LABELS.with_columns(pl.Series("decisive_step", [1, 2, 1, 4]))
    exp = _row(random_expected(labels, RUNS, steps).rename({"n": "items"}))
    # a: 3 candidates, 2 by x; b: 3, 2 by x; c: 1, 1 by y; d: 6, 2 by y
    assert exp["expected_agent_acc"] == pytest.approx((2 / 3 + 2 / 3 + 1 + 2 / 6) / 4)
    assert exp["expected_step_acc"] == pytest.approx((1 / 3 + 1 / 3 + 1 + 1 / 6) / 4)
    runs = RUNS.with_columns(pl.lit(True).alias("success"))
    hits = []
    for seed in range(150):
        pred = attribute(runs, steps, "random", seed)
        hits.append(_row(accuracy(labels, pred, RUNS, 0))["step_acc"])
    assert sum(hits) / len(hits) == pytest.approx(exp["expected_step_acc"], abs=0.06)


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
    acc = accuracy(LABELS, _preds("p", ["x"] * 4, [1, 10, 3, 5]), RUNS, 2)
    steps = pl.DataFrame({"run_id": ["a"], "step": [1], "actor": ["x"], "kind": ["message"]})
    expected = random_expected(LABELS, RUNS, steps)
    m = metrics(acc, fun, LABELS, RUNS, expected)
    assert m["injection"] == {
        "injections": 3,
        "flipped": 1,
        "recovered": 1,
        "invalid": 1,
        "prefix_fidelity": pytest.approx(2 / 3, abs=1e-6),
    }
    assert m["attribution"]["p/all/all"]["step_acc"] == 1.0
    assert m["random_expected"]["all/all"]["expected_agent_acc"] == pytest.approx(0.25)
    json.dumps(m)
    fig = accuracy_figure(acc, tmp_path / "fig.png")
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    overview = pl.DataFrame(
        {
            "benchmark": ["b"],
            "system": ["s"],
            "n_runs": [10],
            "n_failed": [2],
            "failure_rate": [0.2],
        }
    )
    html = render_report(m, acc, fun, expected, fig, natural_failures_html(overview), "tiny")
    assert "Natural failures" in html and "0.200" in html
    assert "data:image/png;base64," in html and "<table>" in html and "66.7%" in html
    assert "step_acc_substring" in html and "expected_step_acc" in html


def test_modes_heatmap_and_natural_section(tmp_path) -> None:
    modes = pl.DataFrame(
        {
            "benchmark": ["b", "b", "c"],
            "system": ["s", "s", "t"],
            "mode": ["reasoning.x", "action.y", "reasoning.x"],
            "count": [3, 1, 2],
            "share": [0.75, 0.25, 1.0],
            "source": ["replay"] * 3,
        }
    )
    fig = modes_figure(modes, tmp_path / "modes.png")
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert modes_figure(modes.clear(), tmp_path / "empty.png").exists()
    overview = pl.DataFrame({"benchmark": ["b"], "n_failed": [4]})
    candidates = pl.DataFrame(
        {"candidate": ["candidate.a_b"], "size": [2], "run_ids": [["r1", "r2"]]}
    )
    html = "\n".join(natural_failures_html(overview, modes, fig, None, None, candidates))
    assert "source: replay" in html and "candidate.a_b" in html and "run_ids" not in html
    assert "data:image/png;base64," in html


def test_figure_with_perfect_accuracy(tmp_path) -> None:
    # p = 1: the Wilson upper bound equals 1 up to rounding; error bars must not go negative
    acc = accuracy(LABELS, _preds("p", ["x", "x", "y", "y"], [1, 10, 3, 5]), RUNS, 0)
    assert _row(acc)["step_acc"] == 1.0
    assert accuracy_figure(acc, tmp_path / "f.png").exists()


def test_learned_section_keeps_totals_and_imports() -> None:
    from whowhen.analysis.report import learned_html

    acc = pl.DataFrame(
        {
            "attributor": ["tracer_lite"] * 3 + ["random"],
            "dataset": ["all", "arithmetic", "who_and_when/Hand-Crafted", "all"],
            "split": ["test"] * 4,
            "n": [10, 6, 4, 10],
            "agent_acc": [0.9, 1.0, 0.75, 0.5],
            "step_acc": [0.7, 0.8, 0.5, 0.2],
            "step_acc_pm1": [0.8, 0.9, 0.5, 0.3],
        }
    )
    html = "\n".join(learned_html(acc, ["arithmetic"]))
    assert "who_and_when/Hand-Crafted" in html and "<td>arithmetic</td>" not in html
    assert "random" not in html.split("<table>")[1]


def test_report_sums_are_the_same_on_every_run(tmp_path, monkeypatch) -> None:
    """The report's SQL runs on one thread: a parallel sum of doubles adds in the order
    threads finish, and a total on a rounding edge then prints differently run to run."""
    from whowhen.analysis import scores

    monkeypatch.setattr(scores, "sql_text", lambda name: (
        "" if name == "_macros" else "SELECT current_setting('threads') AS t, sum(x) AS s FROM v"
    ))  # fmt: skip
    values = pl.DataFrame({"x": [0.1 * (i % 7) + 1e-9 * i for i in range(200_000)]})
    runs = {scores.run_sql("q", {"v": values}).rows()[0] for _ in range(5)}
    assert len(runs) == 1
    assert next(iter(runs))[0] == 1
