"""Dataset-side tables (SQL) against hand-computed answers; their figures written,
byte-identical on rerun, and drawn for empty input."""

from __future__ import annotations

import math

import polars as pl
import pytest

from whowhen.analysis.dataset_figures import (
    dataset_stats,
    dataset_stats_figure,
    drift_figure,
    funnel_figure,
    length_distribution,
    length_distribution_figure,
    recovery_figure,
)
from whowhen.analysis.scores import funnel, recovery_by_mode, rerollout_drift, run_sql
from whowhen.schema import CONTINUATIONS, LABELS, RUNS, STEPS, empty

# five labelled items (e imported) and one unlabelled run (f) that must not count
LABELS_T = pl.DataFrame(
    {
        "run_id": ["a", "b", "c", "d", "e"],
        "split": ["train", "train", "dev", "test", "test"],
        "source": ["injection"] * 4 + ["imported"],
    }
)
RUNS_T = pl.DataFrame(
    {
        "run_id": ["a", "b", "c", "d", "e", "f"],
        "benchmark": ["b1", "b1", "b2", "b2", "ww", "b1"],
        "subset": [None, None, None, None, "HC", None],
        "modality": ["text", "text", "image", "image", "text", "video"],
        "category": ["stem", "stem", "chart", "chart", "general", "stem"],
        "system": ["react", "react", "orch", "orch", "m1", "react"],
        "topology": ["single", "single", "multi", "multi", "multi", "single"],
        "origin": ["injected"] * 4 + ["imported", "injected"],
    }
)
_STEPS = {  # run: [(actor, kind)]; user/system messages and observations are not agent steps
    "a": [("user", "message"), ("x", "action"), ("calc", "observation"), ("x", "action")],
    "b": [("user", "message"), ("x", "action")],
    "c": [
        ("user", "message"),
        ("p", "message"),
        ("q", "message"),
        ("tool", "observation"),
        ("p", "message"),
        ("system", "message"),
    ],
    "d": [
        ("user", "message"),
        ("p", "message"),
        ("q", "message"),
        ("r", "message"),
        ("p", "message"),
        ("q", "message"),
    ],
    "e": [("A", "message"), ("B", "message"), ("A", "message")],
    "f": [("x", "action")] * 9,
}
STEPS_T = pl.DataFrame(
    [
        {"run_id": run, "step": i, "actor": actor, "kind": kind, "content": "..."}
        for run, steps in _STEPS.items()
        for i, (actor, kind) in enumerate(steps)
    ]
)
# per item: steps 4, 2, 6, 6, 3; agent steps 2, 1, 3, 5, 3; distinct agents 1, 1, 2, 3, 2


def _wilson(k: int, n: int) -> tuple[float, float]:
    p, z = k / n, 1.96
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def _row(frame: pl.DataFrame, **where: str) -> dict:
    rows = frame.filter(pl.all_horizontal(pl.col(k) == v for k, v in where.items()))
    assert rows.height == 1, where
    return rows.row(0, named=True)


def test_dataset_stats_counts_shares_and_lengths() -> None:
    t = dataset_stats(LABELS_T, RUNS_T, STEPS_T)
    total = _row(t, dimension="all", value="all")
    assert (total["items"], total["train"], total["dev"], total["test"]) == (5, 2, 1, 2)
    assert total["share"] == 1.0
    assert total["steps_mean"] == pytest.approx(21 / 5)
    assert total["agent_steps_mean"] == pytest.approx(14 / 5)
    assert total["agent_steps_median"] == 3.0
    assert total["agent_steps_max"] == 5
    assert total["n_agents_mean"] == pytest.approx(9 / 5)
    text = _row(t, dimension="modality", value="text")
    assert (text["items"], text["share"], text["agent_steps_median"]) == (3, 0.6, 2.0)
    image = _row(t, dimension="modality", value="image")
    assert image["agent_steps_median"] == 4.0  # even count: mean of the two middle (3, 5)
    assert (image["dev"], image["test"], image["n_agents_mean"]) == (1, 1, 2.5)
    assert _row(t, dimension="dataset", value="ww/HC")["items"] == 1
    assert _row(t, dimension="benchmark", value="ww")["test"] == 1
    assert _row(t, dimension="source", value="imported")["items"] == 1
    assert _row(t, dimension="category", value="chart")["steps_mean"] == 6.0
    # every dimension partitions the same items; the unlabelled run f never counts
    sums = t.group_by("dimension").agg(pl.col("items").sum(), pl.col("share").sum())
    assert set(sums["items"]) == {5}
    assert sums["share"].to_list() == pytest.approx([1.0] * sums.height)
    assert "video" not in t["value"].to_list()
    assert t["dimension"].to_list()[0] == "modality" and t["dimension"][-1] == "all"


def test_length_distribution_quantiles() -> None:
    t = length_distribution(LABELS_T, RUNS_T, STEPS_T)
    built_text = _row(t, dimension="collection", value="built: text", measure="agent_steps")
    assert built_text["runs"] == 2  # a, b; the imported e is its own collection
    assert (built_text["min"], built_text["median"], built_text["max"]) == (1, 1.5, 2)
    assert built_text["p25"] == pytest.approx(1.25)
    assert _row(t, dimension="collection", value="imported: ww/HC", measure="steps")["max"] == 3
    every = _row(t, dimension="all", value="all", measure="agent_steps")  # 1 2 3 3 5
    assert (every["runs"], every["median"], every["p25"], every["p75"]) == (5, 3.0, 2.0, 3.0)
    assert every["p10"] == pytest.approx(1.4) and every["p90"] == pytest.approx(4.2)
    assert every["mean"] == pytest.approx(2.8)
    assert _row(t, dimension="topology", value="multi", measure="steps")["median"] == 6.0


def _continuations(rows: list[tuple[str, str, str, str]]) -> pl.DataFrame:
    """(benchmark, system, mode, status) rows; every warm prefix exact, re-rollout status
    equal to the status, re-rollout prefix drifted on every third row."""
    return pl.DataFrame(
        [
            {
                "run_id": f"r{i}",
                "injection_id": f"i{i}",
                "benchmark": b,
                "system": s,
                "mode": m,
                "status": st,
                "prefix_exact": True,
                "rerollout_prefix_exact": i % 3 != 0,
                "rerollout_status": st,
                "rerollout_label_wrong": False,
                "earlier_error_step": None,
            }
            for i, (b, s, m, st) in enumerate(rows)
        ],
        schema_overrides={"earlier_error_step": pl.Int64},
    )


CONT_T = _continuations(
    [("b1", "s", "m", "recovered")] * 3
    + [("b1", "s", "m", "flipped")] * 7
    + [("b1", "s", "m", "invalid")] * 2
    + [("b1", "s", "n", "flipped")] * 4
    + [("b2", "s", "z", "invalid")] * 2
)


def test_wilson_bounds_in_recovery_and_drift() -> None:
    rec = recovery_by_mode(CONT_T)
    m = _row(rec, mode="m")
    assert (m["valid"], m["recovered"], m["recovery_rate"]) == (10, 3, 0.3)
    lo, hi = _wilson(3, 10)
    assert (m["recovery_lo"], m["recovery_hi"]) == (pytest.approx(lo), pytest.approx(hi))
    assert (round(lo, 4), round(hi, 4)) == (0.1078, 0.6032)  # published Wilson 3/10
    n = _row(rec, mode="n")  # 0 of 4: the bound is exactly 0, the upper one Wilson's
    assert n["recovery_lo"] == 0.0 and n["recovery_hi"] == pytest.approx(_wilson(0, 4)[1])
    z = _row(rec, mode="z")  # no valid injection: rate and bounds NULL
    assert z["recovery_rate"] is None and z["recovery_lo"] is None and z["recovery_hi"] is None
    drift = rerollout_drift(CONT_T)
    everything = _row(drift, benchmark="all", system="all")
    assert everything["warm_prefix_exact"] == 1.0 and everything["warm_prefix_exact_hi"] == 1.0
    assert everything["warm_prefix_exact_lo"] == pytest.approx(_wilson(18, 18)[0])
    assert everything["rerollout_drift"] == pytest.approx(6 / 18)  # rows 0, 3, ..., 15
    assert everything["rerollout_drift_lo"] == pytest.approx(_wilson(6, 18)[0])
    assert everything["rerollout_label_differs_hi"] == pytest.approx(_wilson(0, 18)[1])


def test_funnel_pairs_sum_over_modes() -> None:
    pairs = run_sql("funnel_pairs", {"funnel": funnel(CONT_T)})
    b1 = _row(pairs, benchmark="b1", system="s")
    assert (b1["injections"], b1["flipped"], b1["recovered"], b1["invalid"]) == (16, 11, 3, 2)
    assert b1["flip_rate"] == pytest.approx(11 / 14)
    assert (b1["flip_lo"], b1["flip_hi"]) == tuple(pytest.approx(x) for x in _wilson(11, 14))
    b2 = _row(pairs, benchmark="b2", system="s")  # only invalid injections
    assert b2["flip_rate"] is None and b2["flip_lo"] is None


def _figures(tables: dict[str, pl.DataFrame], out) -> dict[str, bytes]:
    paths = {
        "dataset_stats": dataset_stats_figure(tables["stats"], out / "dataset_stats.png"),
        "length_distribution": length_distribution_figure(
            tables["lengths"], out / "length_distribution.png"
        ),
        "funnel": funnel_figure(tables["funnel"], out / "funnel.png"),
        "recovery": recovery_figure(tables["recovery"], out / "recovery.png"),
        "drift": drift_figure(tables["drift"], out / "drift.png"),
    }
    return {name: path.read_bytes() for name, path in paths.items()}


def _tables(labels, runs, steps, cont) -> dict[str, pl.DataFrame]:
    return {
        "stats": dataset_stats(labels, runs, steps),
        "lengths": length_distribution(labels, runs, steps),
        "funnel": funnel(cont),
        "recovery": recovery_by_mode(cont),
        "drift": rerollout_drift(cont),
    }


def test_figures_written_and_byte_identical(tmp_path) -> None:
    tables = _tables(LABELS_T, RUNS_T, STEPS_T, CONT_T)
    first = _figures(tables, tmp_path / "one")
    second = _figures(tables, tmp_path / "two")
    for name, data in first.items():
        assert data.startswith(b"\x89PNG"), name
        assert b"matplotlib" not in data, name  # no Software tag
        assert data == second[name], f"{name}.png differs on rerun"
    assert not list(tmp_path.glob("*/.*.tmp"))  # atomic writes leave no temp files


def test_empty_inputs_draw_no_data_figures(tmp_path) -> None:
    tables = _tables(empty(LABELS), empty(RUNS), empty(STEPS), empty(CONTINUATIONS))
    assert all(t.is_empty() for name, t in tables.items() if name != "drift")
    assert tables["drift"]["injections"].to_list() == [0]  # the grand-total row, over nothing
    for data in _figures(tables, tmp_path / "empty").values():
        assert data.startswith(b"\x89PNG")
    # column-less frames too (a stage that produced nothing at all)
    bare = dict.fromkeys(tables, pl.DataFrame())
    for data in _figures(bare, tmp_path / "bare").values():
        assert data.startswith(b"\x89PNG")
