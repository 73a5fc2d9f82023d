"""The feedback loop's analysis: per-round and accuracy tables checked by hand on a small
synthetic attempts table (two pairs, three sources, three rounds), and its figures and
report section: written, byte-identical, never crashing on empty input."""

from __future__ import annotations

import math

import polars as pl
import pytest

from whowhen.analysis.feedback_analysis import (
    FEEDBACK_TABLES,
    feedback_accuracy_figure,
    feedback_html,
    feedback_rounds_figure,
    feedback_tables,
)
from whowhen.schema import FEEDBACK, empty, to_arrow

A, B = ("arith", "sv"), ("chart", "react")
# pair -> source -> task -> (success per attempt, step_correct per attempt); a solved task
# is not rerun, so only the last attempt of a task may succeed
PLAN = {
    A: {
        "none": {"t1": ([0, 1], None), "t2": ([0, 0, 0], None), "t3": ([1], None)},
        "oracle": {"t1": ([1], [1]), "t2": ([0, 1], [1, None]), "t3": ([1], [1])},
        "random": {
            "t1": ([0, 0, 0], [1, None, 0]),
            "t2": ([0, 1], [0, 1]),
            "t3": ([0, 0, 0], [0, 0, None]),
        },
    },
    B: {
        "none": {"u1": ([0, 0, 0], None), "u2": ([0, 0, 1], None)},
        "oracle": {"u1": ([1], [1]), "u2": ([0, 1], [1, 1])},
        "random": {"u1": ([0, 0, 1], [None, None, 1]), "u2": ([0, 0, 0], [0, 0, 0])},
    },
}


def _rows() -> list[dict]:
    rows = []
    for (bench, system), sources in PLAN.items():
        for source, tasks in sources.items():
            for task, (success, steps) in tasks.items():
                parent = f"{bench}/{system}/{task}/orig"
                for i, ok in enumerate(success):
                    rnd = i + 1
                    step = None if steps is None or steps[i] is None else bool(steps[i])
                    run_id = f"{bench}/{system}/{source}/{task}/r{rnd}"
                    rows.append(
                        {
                            "run_id": run_id,
                            "benchmark": bench,
                            "system": system,
                            "modality": "text",
                            "task_id": task,
                            "source": source,
                            "round": rnd,
                            "parent_run_id": parent,
                            "seed": 100 + rnd,
                            "success": bool(ok),
                            "score": float(ok),
                            "fb_ok": source != "none",
                            "step_correct": step,
                            # agent right when the step is, and on round 1 regardless
                            "agent_correct": None if step is None else step or rnd == 1,
                            "fb_cost_usd": 0.001 if source == "random" else None,
                        }
                    )
                    parent = run_id
    return rows


@pytest.fixture(scope="module")
def attempts() -> pl.DataFrame:
    return pl.from_arrow(to_arrow(_rows(), FEEDBACK))


@pytest.fixture(scope="module")
def tables(attempts) -> dict[str, pl.DataFrame]:
    return feedback_tables(attempts)


def wilson(k: int, n: int) -> tuple[float, float]:
    p, z = k / n, 1.96
    mid, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (mid - half) / (1 + z * z / n)), min(1.0, (mid + half) / (1 + z * z / n))


def _one(frame: pl.DataFrame, **where: object) -> dict:
    rows = frame.filter(pl.all_horizontal(pl.col(k) == v for k, v in where.items()))
    assert rows.height == 1, where
    return rows.row(0, named=True)


def _solved(t: pl.DataFrame, bench: str, system: str, source: str) -> list[int]:
    sub = t.filter(
        (pl.col("benchmark") == bench) & (pl.col("system") == system) & (pl.col("source") == source)
    ).sort("round")
    assert sub["round"].to_list() == [0, 1, 2, 3]
    return sub["solved"].to_list()


SOLVED = {
    ("arith", "sv", "none"): [0, 1, 2, 2],
    ("arith", "sv", "oracle"): [0, 2, 3, 3],
    ("arith", "sv", "random"): [0, 0, 1, 1],
    ("chart", "react", "none"): [0, 0, 0, 1],
    ("chart", "react", "oracle"): [0, 1, 2, 2],
    ("chart", "react", "random"): [0, 0, 0, 1],
    ("all", "all", "none"): [0, 1, 2, 3],
    ("all", "all", "oracle"): [0, 3, 5, 5],
    ("all", "all", "random"): [0, 0, 1, 2],
}


def test_rounds_solved_by_hand(tables) -> None:
    t = tables["feedback_rounds"]
    assert t.columns == [
        "benchmark", "system", "source", "round", "n", "solved", "rate", "rate_lo", "rate_hi",
        "attempts", "fb_step_acc",
    ]  # fmt: skip
    assert t.height == 9 * 4
    for (bench, system, source), solved in SOLVED.items():
        assert _solved(t, bench, system, source) == solved, (bench, system, source)
    for row in t.iter_rows(named=True):
        n = {"arith": 3, "chart": 2, "all": 5}[row["benchmark"]]
        assert row["n"] == n  # pooled n is the sum of the pairs' n
        assert row["rate"] == pytest.approx(row["solved"] / n)
        assert (row["rate_lo"], row["rate_hi"]) == pytest.approx(wilson(row["solved"], n))
        assert row["rate_lo"] <= row["rate"] <= row["rate_hi"]
        if row["round"] == 0:
            assert (row["solved"], row["attempts"], row["fb_step_acc"]) == (0, 0, None)
    for _, sub in t.group_by("benchmark", "system", "source"):
        solved = sub.sort("round")["solved"].to_list()
        assert solved == sorted(solved)  # cumulative: never falls


def test_rounds_attempts_and_feedback_accuracy(tables) -> None:
    t = tables["feedback_rounds"]
    # plain retry on arith/sv: t1, t2, t3 in round 1; t3 solved, so t1, t2; then t2 alone
    assert [_one(t, benchmark="arith", source="none", round=r)["attempts"] for r in (1, 2, 3)] == [
        3,
        2,
        1,
    ]
    assert _one(t, benchmark="arith", source="none", round=1)["fb_step_acc"] is None
    # random, round 1 pooled: t1 right, t2 and t3 wrong, u1 unknown (ignored), u2 wrong
    assert _one(t, benchmark="all", source="random", round=1)["fb_step_acc"] == 0.25
    assert _one(t, benchmark="all", source="random", round=1)["attempts"] == 5
    # oracle on arith/sv round 2: only t2, whose gold is unknown -> no accuracy at all
    assert _one(t, benchmark="arith", source="oracle", round=2)["fb_step_acc"] is None


def test_accuracy_table_by_hand(tables) -> None:
    t = tables["feedback_accuracy"]
    assert t.height == 9
    assert t.columns == [
        "benchmark", "system", "source", "n_tasks", "solved", "attempts", "n_feedback",
        "agent_acc", "step_acc", "step_acc_lo", "step_acc_hi", "final_rate", "final_rate_lo",
        "final_rate_hi", "gain_over_retry", "r1_step_acc", "r1_step_acc_lo", "r1_step_acc_hi",
        "r1_rate", "r1_rate_lo", "r1_rate_hi", "fb_cost_usd", "fb_cost_per_task",
    ]  # fmt: skip
    final = {
        ("arith", "none"): (2, 3),
        ("arith", "oracle"): (3, 3),
        ("arith", "random"): (1, 3),
        ("chart", "none"): (1, 2),
        ("chart", "oracle"): (2, 2),
        ("chart", "random"): (1, 2),
        ("all", "none"): (3, 5),
        ("all", "oracle"): (5, 5),
        ("all", "random"): (2, 5),
    }
    for (bench, source), (k, n) in final.items():
        row = _one(t, benchmark=bench, source=source)
        assert (row["solved"], row["n_tasks"]) == (k, n)
        assert row["final_rate"] == pytest.approx(k / n)
        assert (row["final_rate_lo"], row["final_rate_hi"]) == pytest.approx(wilson(k, n))
        retry = final[(bench, "none")]
        assert row["gain_over_retry"] == pytest.approx(k / n - retry[0] / retry[1])
    assert _one(t, benchmark="all", source="random")["gain_over_retry"] == pytest.approx(-0.2)
    assert _one(t, benchmark="all", source="oracle")["gain_over_retry"] == pytest.approx(0.4)
    # step accuracy ignores attempts with an unknown gold step
    random_a = _one(t, benchmark="arith", source="random")
    assert (random_a["n_feedback"], random_a["attempts"]) == (6, 8)
    assert random_a["step_acc"] == pytest.approx(2 / 6)
    assert random_a["agent_acc"] == pytest.approx(4 / 6)
    assert (random_a["step_acc_lo"], random_a["step_acc_hi"]) == pytest.approx(wilson(2, 6))
    # round 1 alone: every source on the same tasks
    assert random_a["r1_rate"] == 0.0 and random_a["r1_step_acc"] == pytest.approx(1 / 3)
    oracle_a = _one(t, benchmark="arith", source="oracle")
    assert oracle_a["r1_rate"] == pytest.approx(2 / 3) and oracle_a["r1_step_acc"] == 1.0
    assert (oracle_a["r1_rate_lo"], oracle_a["r1_rate_hi"]) == pytest.approx(wilson(2, 3))
    assert _one(t, benchmark="all", source="none")["r1_rate"] == pytest.approx(1 / 5)
    pooled = _one(t, benchmark="all", source="random")
    assert (pooled["n_feedback"], pooled["step_acc"]) == (10, pytest.approx(3 / 10))
    assert _one(t, benchmark="all", source="oracle")["step_acc"] == 1.0
    assert _one(t, benchmark="all", source="oracle")["n_feedback"] == 6
    retry = _one(t, benchmark="all", source="none")
    assert (retry["n_feedback"], retry["step_acc"], retry["agent_acc"]) == (0, None, None)
    assert (retry["fb_cost_usd"], retry["gain_over_retry"]) == (0.0, 0.0)
    assert random_a["fb_cost_usd"] == pytest.approx(0.008)
    assert pooled["fb_cost_per_task"] == pytest.approx(0.014 / 5)


def test_gain_is_null_without_a_retry_source(attempts) -> None:
    t = feedback_tables(attempts.filter(pl.col("source") != "none"))["feedback_accuracy"]
    assert t.height == 6 and t["gain_over_retry"].null_count() == 6


def test_empty_attempts_give_empty_tables_and_no_data_figures(tmp_path) -> None:
    tables = feedback_tables(empty(FEEDBACK))
    assert set(tables) == set(FEEDBACK_TABLES)
    assert all(t.height == 0 for t in tables.values())
    rounds = feedback_rounds_figure(tables["feedback_rounds"], tmp_path / "r.png")
    acc = feedback_accuracy_figure(tables["feedback_accuracy"], tmp_path / "a.png")
    assert rounds.read_bytes()[:8] == acc.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = feedback_html(tables, {"feedback_rounds": rounds, "feedback_accuracy": acc})
    assert "Attribution feedback" in html and "No feedback reruns" in html
    assert html.count("data:image/png;base64,") == 2


def test_figures_are_deterministic_and_report_section(tables, tmp_path) -> None:
    paths = {}
    for name, draw in (
        ("feedback_rounds", feedback_rounds_figure),
        ("feedback_accuracy", feedback_accuracy_figure),
    ):
        first = draw(tables[name], tmp_path / f"{name}.png").read_bytes()
        again = draw(tables[name], tmp_path / f"{name}_2.png").read_bytes()
        assert first[:8] == b"\x89PNG\r\n\x1a\n" and first == again, name
        empty_png = draw(tables[name].clear(), tmp_path / f"{name}_empty.png").read_bytes()
        assert empty_png != first  # the no-data figure, not the real one
        paths[name] = tmp_path / f"{name}.png"
    html = feedback_html(tables, paths)
    assert html.count("data:image/png;base64,") == 2
    assert "Round 0 is the original failure" in html  # workflow/report/feedback_rounds.rst
    assert "horizontal reference line" in html  # workflow/report/feedback_accuracy.rst
    assert "plain retry (none)" in html and "gain_over_retry" in html
    assert "No feedback reruns" not in html
    # the pooled table only: one row per source, plain retry first
    body = html.split("By the last round", 1)[1]
    assert body.count("<tr>") == 4 and "arith" not in body
    assert body.index("plain retry (none)") < body.index("oracle") < body.index("random")
