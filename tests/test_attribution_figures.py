"""Attribution figure tables (one SQL file each) checked by hand on the metrics fixture,
against `attribution_metrics`, and their figures: written, byte-identical, never crashing
on empty input."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from PIL import Image

from whowhen.analysis import attribution_figures
from whowhen.analysis.attribution_figures import FIGURES
from whowhen.analysis.attribution_tables import (
    ATTRIBUTION_TABLES,
    attribution_tables,
    attributor_table,
)
from whowhen.analysis.breakdowns import attribution_metrics
from whowhen.analysis.figures import empty_figure
from whowhen.analysis.items import scored_items

from .metrics_fixture import BASE, LABELS_F, PREDS_F, RUNS_F, STEPS_F, A, B

INFO = {
    A: {"protocol": "all_at_once", "family": "mock", "open_weight": "true"},
    B: {"protocol": "all_at_once", "family": "gpt", "open_weight": "false"},
}


def wilson(k: int, n: int) -> tuple[float, float]:
    p, z = k / n, 1.96
    mid, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (mid - half) / (1 + z * z / n), (mid + half) / (1 + z * z / n)


@pytest.fixture(scope="module")
def tables() -> dict[str, pl.DataFrame]:
    items = scored_items(LABELS_F, PREDS_F, RUNS_F, STEPS_F, INFO)
    return attribution_tables(items, attributor_table([A, B, BASE], INFO), max_k=3, clip=4)


def _one(frame: pl.DataFrame, **where: object) -> dict:
    rows = frame.filter(pl.all_horizontal(pl.col(k) == v for k, v in where.items()))
    assert rows.height == 1, where
    return rows.row(0, named=True)


def test_cross_modality_by_hand(tables) -> None:
    t = tables["cross_modality"]
    # A, text items r1, r2, r5: agent right on r1, r2 (r5 has no prediction); step on r2
    row = _one(t, attributor=A, modality="text", split="all")
    assert (row["n"], row["agent_acc"], row["step_acc"]) == (3, 2 / 3, 1 / 3)
    assert (row["step_acc_lo"], row["step_acc_hi"]) == pytest.approx(wilson(1, 3))
    # modes: r1 a.x predicted a.x (right), r2 r.y predicted r.z; r5 has no gold mode
    assert (row["mode_n"], row["mode_acc"]) == (2, 0.5)
    # the baseline never predicts a mode: no mode accuracy at all, not a misleading 0
    assert _one(t, attributor=BASE, modality="text", split="all")["mode_acc"] is None
    overall = _one(t, attributor=A, modality="all", split="all")
    assert overall["n"] == 5 and overall["agent_acc"] == pytest.approx(3 / 5)


def test_tables_agree_with_attribution_metrics(tables) -> None:
    metrics = attribution_metrics(LABELS_F, PREDS_F, RUNS_F, STEPS_F, by=["modality"], n_boot=10)
    for row in metrics.filter(pl.col("breakdown") == "modality").iter_rows(named=True):
        mine = _one(
            tables["cross_modality"],
            attributor=row["attributor"],
            modality=row["group"],
            split=row["split"],
        )
        assert mine["step_acc"] == pytest.approx(row["step_acc"])
        assert mine["agent_acc"] == pytest.approx(row["agent_acc"])
    tol = tables["tolerance"]
    for row in metrics.filter(pl.col("breakdown") == "all").iter_rows(named=True):
        for k in (0, 1, 2, 3):
            expected = row["step_acc"] if k == 0 else row[f"step_acc_pm{k}"]
            got = _one(tol, attributor=row["attributor"], split=row["split"], k=k)["step_acc"]
            assert got == pytest.approx(expected)


def test_cost_performance_and_pareto(tables) -> None:
    t = tables["cost_performance"].filter(pl.col("split") == "all")
    a, b, base = (_one(t, attributor=x) for x in (A, B, BASE))
    # A: costs 0.01, 0.02, 0.005, 0.004 over its 4 rows (r5 missing is not a cost)
    assert a["cost_per_traj"] == pytest.approx(0.039 / 4)
    assert (a["open_weight"], b["open_weight"], base["open_weight"]) == (True, False, None)
    assert a["tokens_per_traj"] == pytest.approx((120 + 230 + 60 + 80) / 4)
    # step accuracy over 5 items: A 1/5 (r2), B 1/5 (r1), BASE 1/5 (r1) at zero cost:
    # BASE dominates both (as accurate, cheaper), so it alone is on the frontier
    assert base["pareto"] and not a["pareto"] and not b["pareto"]


def test_delta_step_is_clipped_and_shares_of_all_items(tables) -> None:
    t = tables["delta_step"].filter((pl.col("attributor") == A) & (pl.col("split") == "all"))
    # A parsed: r1 10-1=+9 (clipped to +4), r2 0, r3 5-3=+2; r4 unparsed, r5 missing
    assert dict(zip(t["delta"], t["n"], strict=True)) == {0: 1, 2: 1, 4: 1}
    assert set(t["n_total"]) == {5} and t["share"].sum() == pytest.approx(3 / 5)


def test_mode_confusion_rows_sum_to_one(tables) -> None:
    t = tables["mode_confusion"]
    assert set(t["attributor"]) == {A}  # only A names modes
    rows = t.filter(pl.col("split") == "all").group_by("gold_mode").agg(pl.col("share").sum())
    assert rows["share"].to_list() == pytest.approx([1.0] * rows.height)
    # gold a.x: r1 predicted a.x; r4's answer says a.x but is unparsed, so it is '(none)'
    gold_ax = t.filter((pl.col("split") == "all") & (pl.col("gold_mode") == "a.x"))
    assert dict(zip(gold_ax["predicted_mode"], gold_ax["n"], strict=True)) == {
        "a.x": 1,
        "(none)": 1,
    }


def test_length_bins_are_ordered(tables) -> None:
    t = tables["length_accuracy"].filter((pl.col("attributor") == A) & (pl.col("split") == "all"))
    assert t["bin_start"].to_list() == sorted(t["bin_start"].to_list())
    assert t["n"].sum() == 5


def test_protocols_pool_attributors(tables) -> None:
    t = tables["protocols"].filter(pl.col("split") == "all")
    assert _one(t, protocol="baseline", family="none")["n"] == 5
    assert _one(t, protocol="all_at_once", family="gpt")["n"] == 5


def _pixels(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        assert im.format == "PNG"
        return np.asarray(im.convert("RGB")).astype(int)


def _coloured(px: np.ndarray) -> int:
    """Pixels with a visible hue (bars, markers, heatmap cells); text, frames, grid lines
    and the background are grey."""
    return int((px.max(axis=2) - px.min(axis=2) > 16).sum())


def test_figures_written_deterministic_and_empty_safe(tables, tmp_path: Path, monkeypatch) -> None:
    assert set(FIGURES) == set(ATTRIBUTION_TABLES)
    said: list[tuple[str, str]] = []

    def spy(path, title, message):
        said.append((title, message))
        return empty_figure(path, title, message)

    monkeypatch.setattr(attribution_figures, "empty_figure", spy)
    reference = empty_figure(tmp_path / "reference.png", "Some title", "no scored items")
    for name, draw in FIGURES.items():
        first, second = tmp_path / f"{name}1.png", tmp_path / f"{name}2.png"
        draw(tables[name], first, split="all")
        draw(tables[name], second, split="all")
        assert first.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert first.read_bytes() == second.read_bytes(), name
        assert not said, name  # the fixture has items: a real figure, drawn in colour
        assert _coloured(_pixels(first)) > 0, name
        # empty input: the "nothing to draw" figure, its message naming the default split
        empty = tmp_path / f"{name}_empty.png"
        draw(tables[name].clear(), empty)
        assert len(said) == 1 and said[0][1].startswith("no ") and "test" in said[0][1], said
        said.clear()
        px = _pixels(empty)
        assert px.shape == _pixels(reference).shape, name  # the fixed 6 x 2.4 in figure
        assert _coloured(px) == 0, name  # no data drawn
        # the message: #555 text in the middle band of the figure, centred horizontally
        height, width = px.shape[:2]
        band = px[int(height * 0.45) : int(height * 0.65)]
        _, xs = np.nonzero((band == 0x55).all(axis=2))
        assert xs.size > 50, name
        assert abs((xs.min() + xs.max()) / 2 - width / 2) < width * 0.05, name


def test_replay_oracle_is_drawn_but_never_on_the_frontier() -> None:
    """The oracle re-runs the environment (an upper bound): perfect and free, it would
    dominate every attributor of logs; it takes no part in the frontier."""
    oracle = PREDS_F.filter(pl.col("attributor") == BASE).with_columns(
        pl.lit("counterfactual_oracle").alias("attributor"),
        pl.lit(True).alias("parse_ok"),
    )
    gold = LABELS_F.select("run_id", pl.col("decisive_agent"), pl.col("decisive_step"))
    oracle = (
        oracle.join(gold, on="run_id")
        .with_columns(agent=pl.col("decisive_agent"), step=pl.col("decisive_step"))
        .select(PREDS_F.columns)
    )
    items = scored_items(LABELS_F, pl.concat([PREDS_F, oracle]), RUNS_F, STEPS_F, INFO)
    names = [A, B, BASE, "counterfactual_oracle"]
    t = attribution_tables(items, attributor_table(names, INFO))["cost_performance"]
    t = t.filter(pl.col("split") == "all")
    assert _one(t, attributor="counterfactual_oracle")["step_acc"] == 1.0
    assert not _one(t, attributor="counterfactual_oracle")["pareto"]
    assert _one(t, attributor=BASE)["pareto"]
