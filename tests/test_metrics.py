"""Attribution metrics (whowhen.analysis.breakdowns, items): every number of a hand-built fixture
computed by hand, the exact-match rule, bootstrap intervals, breakdown partitions, and
the metrics over real LLM predictions made over HTTP against the test server."""

from __future__ import annotations

import time
import zlib
from pathlib import Path
from tempfile import TemporaryDirectory

import numpy as np
import polars as pl
import pytest

from whowhen.analysis.attributor_info import attributor_info_from_config, attributor_protocol
from whowhen.analysis.breakdowns import COLUMNS, attribution_metrics, bootstrap_ci
from whowhen.analysis.items import ITEM_KEYS, length_bin, scored_items
from whowhen.analysis.report import metrics_html
from whowhen.errors import WhowhenError
from whowhen.models.prices import DEFAULT_PRICES
from whowhen.schema import LABELS

from .metrics_fixture import (
    BASE,
    LABELS_F,
    PREDS_F,
    RUNS_F,
    STEPS_F,
    A,
    B,
    preds_table,
    runs_table,
    steps_table,
    typed_table,
)

BY = ["modality", "category", "topology", "system", "length_bin", "dataset", "protocol", "family"]


@pytest.fixture(scope="module")
def fixture_metrics() -> pl.DataFrame:
    return attribution_metrics(LABELS_F, PREDS_F, RUNS_F, STEPS_F, by=BY, n_boot=500, seed=1)


def _row(m: pl.DataFrame, attributor: str, breakdown="all", group="all", split="all") -> dict:
    rows = m.filter(
        (pl.col("attributor") == attributor)
        & (pl.col("breakdown") == breakdown)
        & (pl.col("group") == group)
        & (pl.col("split") == split)
    )
    assert rows.height == 1, (attributor, breakdown, group, split)
    return rows.row(0, named=True)


def _check(row: dict, expected: dict) -> None:
    for key, value in expected.items():
        if value is None or (isinstance(value, str | int) and not isinstance(value, bool)):
            assert row[key] == value, key
        else:
            assert row[key] == pytest.approx(value, abs=1e-12), key


def test_every_number_by_hand(fixture_metrics) -> None:
    m = fixture_metrics
    assert tuple(m.columns) == COLUMNS
    # A over r1..r5: agent right on r1, r2, r3 (r4 unparsed, r5 missing); step right on r2
    # only; |d step| over the three parsed answers: 9, 0, 2; gold mode known on r1, r2, r4,
    # right on r1 only (r4's right mode is unparsed); cost etc. over its four rows.
    _check(
        _row(m, A),
        dict(protocol="all_at_once", family="mock", n=5, n_items=5, agent_acc=3 / 5,
             step_acc=1 / 5, joint_acc=1 / 5, step_acc_pm1=1 / 5, step_acc_pm2=2 / 5,
             step_acc_pm3=2 / 5, step_acc_pm4=2 / 5, step_acc_pm5=2 / 5, mode_n=3,
             mode_acc=1 / 3, mean_abs_step_err=(9 + 0 + 2) / 3, n_parsed=3,
             parse_fail_rate=2 / 5, tokens_per_traj=(120 + 230 + 60 + 80) / 4,
             cost_per_traj=(0.01 + 0.02 + 0.005 + 0.004) / 4),
    )  # fmt: skip
    # The baseline: (solver,1) (solver,1) (assistant,1) unparsed (Orchestrator,1) against
    # gold (solver,1) (verifier,4) (assistant,3) (assistant,7) (Orchestrator,2).
    _check(
        _row(m, BASE),
        dict(protocol="baseline", family="none", n=5, agent_acc=3 / 5, step_acc=1 / 5,
             joint_acc=1 / 5, step_acc_pm1=2 / 5, step_acc_pm2=3 / 5, step_acc_pm3=4 / 5,
             step_acc_pm4=4 / 5, step_acc_pm5=4 / 5, mode_n=3, mode_acc=0.0,
             mean_abs_step_err=(0 + 3 + 2 + 1) / 4, n_parsed=4, parse_fail_rate=1 / 5,
             tokens_per_traj=0.0, cost_per_traj=0.0),
    )  # fmt: skip
    # B answered r1 only (right); the other four are missing, so wrong and unparsed.
    _check(
        _row(m, B),
        dict(family="gpt", agent_acc=1 / 5, step_acc=1 / 5, joint_acc=1 / 5, mode_acc=0.0,
             mean_abs_step_err=0.0, parse_fail_rate=4 / 5, tokens_per_traj=340.0,
             cost_per_traj=0.03),
    )  # fmt: skip


def test_breakdowns_by_hand(fixture_metrics) -> None:
    m = fixture_metrics
    _check(_row(m, A, "modality", "text"), dict(n=3, agent_acc=2 / 3, step_acc=1 / 3))
    _check(_row(m, A, "modality", "image"), dict(n=2, agent_acc=1 / 2, step_acc=0.0))
    _check(_row(m, A, split="test"), dict(n=2, agent_acc=1.0, step_acc=1 / 2, mode_n=1))
    _check(_row(m, A, "modality", "text", "test"), dict(n=1, step_acc=1.0, mode_acc=0.0))
    _check(_row(m, BASE, split="unsplit"), dict(n=1, agent_acc=1.0, step_acc=0.0))
    _check(_row(m, BASE, "category", "unknown"), dict(n=1, agent_acc=1.0))
    _check(_row(m, BASE, "dataset", "wnw/Hand"), dict(n=1, step_acc_pm1=1.0))
    _check(_row(m, BASE, "system", "sv"), dict(n=2, agent_acc=1 / 2, joint_acc=1 / 2))
    bins = {"r1": "1-4", "r2": "5-9", "r3": "10-19", "r4": "0", "r5": "20+"}
    for run_id, group in bins.items():
        gold = LABELS_F.filter(pl.col("run_id") == run_id)
        base = PREDS_F.filter((pl.col("run_id") == run_id) & (pl.col("attributor") == BASE))
        right = bool(base["parse_ok"][0]) and base["step"][0] == gold["decisive_step"][0]
        _check(_row(m, BASE, "length_bin", group), dict(n=1, step_acc=float(right)))
    # protocol / family pool the attributors of a group over the same trajectories
    _check(
        _row(m, "all", "protocol", "all_at_once"),
        dict(family="all", n=10, n_items=5, agent_acc=(3 + 1) / 10, step_acc=(1 + 1) / 10,
             parse_fail_rate=(2 + 4) / 10, cost_per_traj=(0.039 + 0.03) / 5),
    )  # fmt: skip
    _check(_row(m, "all", "protocol", "baseline"), dict(n=5, agent_acc=3 / 5))
    _check(_row(m, "all", "family", "gpt"), dict(protocol="all", n=5, step_acc=1 / 5))


def test_exact_match_rule() -> None:
    """Gold 1 never matches 10 nor 10 matches 1; unparsed answers are wrong whatever
    they hold; agent names match exactly."""
    labels = LABELS_F.filter(pl.col("run_id").is_in(["r1", "r2"])).with_columns(
        decisive_step=pl.Series([1, 10])
    )
    preds = preds_table(
        [
            dict(run_id="r1", attributor="x", agent="solver", step=10),
            dict(run_id="r2", attributor="x", agent="verifier ", step=1),
            dict(run_id="r1", attributor="y", agent="solver", step=1, parse_ok=False),
            dict(run_id="r2", attributor="y", agent="Verifier", step=10),
        ]
    )
    items = scored_items(labels, preds, RUNS_F, STEPS_F)  # sorted: x/r1 x/r2 y/r1 y/r2
    assert items["step_ok"].to_list() == [False, False, False, True]
    assert items["agent_ok"].to_list() == [True, False, False, False]  # no trimming, no case
    assert items["within_5"].to_list() == [False, False, False, True]  # |10 - 1| = 9
    m = attribution_metrics(labels, preds, RUNS_F, STEPS_F, by=[], n_boot=50)
    assert m.filter(pl.col("split") == "all")["step_acc"].to_list() == [0.0, 0.5]


def test_bootstrap_contains_point_and_is_seeded(fixture_metrics) -> None:
    big = synthetic(300, seed=3)
    for m in (fixture_metrics, attribution_metrics(*big, by=["modality"], n_boot=400, seed=5)):
        for metric in ("agent_acc", "step_acc", "joint_acc"):
            assert (m[f"{metric}_lo"] <= m[metric] + 1e-12).all()
            assert (m[metric] <= m[f"{metric}_hi"] + 1e-12).all()
    again = attribution_metrics(LABELS_F, PREDS_F, RUNS_F, STEPS_F, by=BY, n_boot=500, seed=1)
    assert again.equals(fixture_metrics)
    one = attribution_metrics(*big, by=[], n_boot=400, seed=5)
    other = attribution_metrics(*big, by=[], n_boot=400, seed=6)
    assert not one["step_acc_lo"].equals(other["step_acc_lo"])
    assert one["step_acc"].equals(other["step_acc"])


def test_bootstrap_shrinks_with_more_items() -> None:
    small = attribution_metrics(*synthetic(40, seed=2), by=[], n_boot=500)
    large = attribution_metrics(*synthetic(640, seed=2), by=[], n_boot=500)

    def width(m: pl.DataFrame, metric: str) -> float:
        row = m.filter((pl.col("split") == "all") & (pl.col("attributor") == "good")).row(
            0, named=True
        )
        return row[f"{metric}_hi"] - row[f"{metric}_lo"]

    for metric in ("agent_acc", "step_acc", "joint_acc"):
        assert width(large, metric) < 0.5 * width(small, metric)
        assert width(large, metric) > 0.0


def test_bootstrap_ci_direct() -> None:
    rng = np.random.default_rng(0)
    ones = np.ones((20, 1))
    lo, hi = bootstrap_ci(ones, ones, 200, rng)
    assert lo[0] == hi[0] == 1.0
    # clusters: 10 trajectories each scored by two attributors pooled (counts 2)
    hits = np.array([[2.0]] * 5 + [[0.0]] * 5)
    lo, hi = bootstrap_ci(hits, np.full((10, 1), 2.0), 2000, np.random.default_rng(1))
    assert lo[0] < 0.5 < hi[0]


def test_paired_resamples_same_interval_for_same_answers() -> None:
    """Every attributor of a group gets the same resampled trajectories."""
    labels, preds, runs, steps = synthetic(200, seed=4)
    twin = preds.filter(pl.col("attributor") == "good").with_columns(attributor=pl.lit("twin"))
    m = attribution_metrics(labels, pl.concat([preds, twin]), runs, steps, by=["system"])
    cols = ["group", "split", "step_acc", "step_acc_lo", "step_acc_hi", "agent_acc_lo"]
    good = m.filter(pl.col("attributor") == "good").select(cols)
    assert good.equals(m.filter(pl.col("attributor") == "twin").select(cols))


def test_breakdown_groups_partition_items() -> None:
    data = synthetic(500, seed=7)
    by = [*ITEM_KEYS, "modality+topology", "protocol", "family", "protocol+family"]
    info = {"good": {"protocol": "all_at_once", "family": "f1"}, "bad": {"family": "f2"}}
    m = attribution_metrics(*data, by=by, n_boot=100, attributor_info=info)
    assert m.filter(pl.col("breakdown") == "protocol+family")["group"].n_unique() == 3
    n_att = data[1]["attributor"].n_unique()
    for split in ("train", "dev", "test", "all"):
        total = m.filter((pl.col("breakdown") == "all") & (pl.col("split") == split)).select(
            "attributor", "n", "n_items"
        )
        assert total["n"].n_unique() == 1  # every attributor is scored on every item
        for key in by:
            parts = m.filter((pl.col("breakdown") == key) & (pl.col("split") == split))
            assert parts.height > 0
            if key in ("protocol", "family", "protocol+family"):
                assert parts["n"].sum() == total["n"][0] * n_att
                continue
            sums = parts.group_by("attributor").agg(pl.col("n", "n_items").sum())
            assert (
                sums.join(total, on="attributor", suffix="_all")
                .select(
                    (pl.col("n") == pl.col("n_all")) & (pl.col("n_items") == pl.col("n_items_all"))
                )
                .to_series()
                .all()
            ), (key, split)
    # the split roll-up is the sum of the splits
    per_split = m.filter((pl.col("breakdown") == "all") & (pl.col("split") != "all"))
    assert (
        per_split["n"].sum()
        == m.filter((pl.col("breakdown") == "all") & (pl.col("split") == "all"))["n"].sum()
    )


def test_conventions_and_errors() -> None:
    assert attributor_protocol("random") == {"protocol": "baseline", "family": "none"}
    assert attributor_protocol("length_prior")["protocol"] == "baseline"
    assert attributor_protocol("gpt-4.1_step_by_step") == {
        "protocol": "step_by_step",
        "family": "gpt-4.1",
    }
    assert attributor_protocol("binary_search_gemini")["family"] == "gemini"
    assert attributor_protocol("mystery") == {"protocol": "unknown", "family": "unknown"}
    info = {"mystery": {"protocol": "all_at_once", "family": "qwen"}}
    assert attributor_protocol("mystery", info)["family"] == "qwen"
    cfg = {
        "llm": [
            {"name": "m1", "model": "mock", "protocol": "hybrid"},
            {"name": "m2", "model": "openai/gpt-4.1-mini"},
            {"name": "m3", "model": "openai-compatible/unlisted"},
        ]
    }
    models = {"mock": {"id": "openai-compatible/mock", "base_url": "http://x"}}
    got = attributor_info_from_config(cfg, models, str(DEFAULT_PRICES))
    assert got == {
        "m1": {"protocol": "hybrid", "family": "mock", "open_weight": "true"},
        "m2": {"protocol": "all_at_once", "family": "gpt-4.1", "open_weight": "false"},
        "m3": {"protocol": "all_at_once", "family": "unlisted", "open_weight": "unknown"},
    }
    frame = pl.DataFrame({"n": [0, 1, 4, 5, 9, 10, 19, 20, 99]})
    assert frame.select(length_bin(pl.col("n"))).to_series().to_list() == [
        "0", "1-4", "1-4", "5-9", "5-9", "10-19", "10-19", "20+", "20+",
    ]  # fmt: skip
    small = pl.DataFrame({"n": [0, 1, 2, 3, 7]})
    assert small.select(length_bin(pl.col("n"), (2, 3))).to_series().to_list() == [
        "0-1", "0-1", "2", "3+", "3+",
    ]  # fmt: skip
    with pytest.raises(WhowhenError, match="unknown breakdown"):
        attribution_metrics(LABELS_F, PREDS_F, RUNS_F, STEPS_F, by=["colour"])
    with pytest.raises(WhowhenError, match="increasing"):
        length_bin(pl.col("n"), (5, 5))
    empty = attribution_metrics(LABELS_F, PREDS_F.clear(), RUNS_F, STEPS_F, by=BY)
    assert empty.height == 0 and tuple(empty.columns) == COLUMNS


def test_latency_is_kept_out_of_the_metrics_in_a_timing_table() -> None:
    """Wall-clock latency differs on every run: never in the reproducible metrics, only in
    the table named for it (mean, median, p95, total per attributor, by hand)."""
    from whowhen.analysis.scores import timing

    assert not any("latency" in c for c in COLUMNS)
    t = timing(PREDS_F)
    row = t.filter(pl.col("attributor") == A).row(0, named=True)
    assert row["predictions"] == 4 and row["latency_s_total"] == pytest.approx(6.5)
    assert row["latency_s_mean"] == pytest.approx(6.5 / 4)
    assert row["latency_s_p50"] == pytest.approx(1.5)  # of 0.5, 1, 2, 3


def test_metrics_html(fixture_metrics) -> None:
    from whowhen.analysis.html import table_html

    parts = metrics_html(fixture_metrics)
    assert all(isinstance(p, str) for p in parts)
    text = "\n".join(parts)
    row = _row(fixture_metrics, A)
    assert f"0.600 [{row['agent_acc_lo']:.3f}, {row['agent_acc_hi']:.3f}]" in text
    for key in BY:
        assert f"By {key} (split: all)" in text
    assert "<td>10-19</td>" in text and "<td>wnw/Hand</td>" in text
    assert "No predictions" in "".join(metrics_html(fixture_metrics.clear()))
    assert "<table>" in table_html(fixture_metrics.head(0).select("n"))
    test_only = "\n".join(metrics_html(fixture_metrics, split="test", pivot="joint_acc"))
    assert "(split: test)" in test_only and "joint_acc [95% CI]" in test_only


def test_metrics_of_llm_predictions_over_http() -> None:
    """Tokens, cost, latency and parse failures of a real all-at-once run against the test
    server (one answer in three unusable even after the repair) reach the metrics."""
    from whowhen.attribution.llm import LLMAttributor
    from whowhen.attribution.llm_protocols import attribute_llm
    from whowhen.attribution.offline import attribute
    from whowhen.models import ModelClient, ResponseCache, load_prices, parse_model
    from whowhen.standin.server import Behaviour, TestServer, attribution_responder

    from .helpers import pipeline

    data = pipeline("solver_verifier")
    labels, runs, steps = data["labels"], data["runs"], data["steps"]

    def responder(prompt: str, schema):
        """Deterministic: a third of the trajectories get an unusable answer, repair too."""
        key = prompt.split("Trajectory:")[1] if "Trajectory:" in prompt else prompt
        key = key.split("\n<|assistant|>")[0]  # a repair request: the same trajectory
        if zlib.crc32(key.encode()) % 3 == 0:
            return "I am not sure."
        return attribution_responder(prompt, schema)

    with TestServer(Behaviour(responder=responder)) as srv, TemporaryDirectory() as cache:
        spec = parse_model(
            "openai-compatible/mock", {"openai-compatible/mock": {"base_url": srv.url}}
        )
        prices = load_prices(DEFAULT_PRICES)
        client = ModelClient(spec, prices, ResponseCache(Path(cache)), progress=False)
        llm = attribute_llm(runs, steps, LLMAttributor("mock_all_at_once", "mock"), client)
    preds = pl.concat([llm, attribute(runs, steps, "last_agent_step", 0)])
    m = attribution_metrics(labels, preds, runs, steps, by=["system", "protocol"], n_boot=200)
    row = _row(m, "mock_all_at_once")
    assert row["protocol"] == "all_at_once" and row["family"] == "mock"
    scored = labels.join(llm, on="run_id")
    assert row["n"] == labels.height == scored.height
    assert row["parse_fail_rate"] == pytest.approx(1 - scored["parse_ok"].mean(), abs=1e-12)
    assert 0 < row["parse_fail_rate"] < 1
    assert row["cost_per_traj"] == pytest.approx(scored["cost_usd"].mean(), abs=1e-15)
    assert row["cost_per_traj"] > 0
    tokens = (scored["tokens_in"] + scored["tokens_out"]).mean()
    assert row["tokens_per_traj"] == pytest.approx(tokens, abs=1e-9)
    ok = scored.filter(pl.col("parse_ok"))
    exact = ((ok["agent"] == ok["decisive_agent"]) & (ok["step"] == ok["decisive_step"])).sum()
    assert row["joint_acc"] == pytest.approx(exact / labels.height, abs=1e-12)
    assert _row(m, "all", "protocol", "baseline")["n"] == labels.height


def synthetic(n: int, seed: int) -> tuple[pl.DataFrame, ...]:
    """n labelled runs over two systems/modalities and three attributors: `good` (about
    70% agent, 50% step right), `bad` (about 20%), `random_ish` (some unparsed)."""
    rng = np.random.default_rng(seed)
    ids = [f"s{i:05d}" for i in range(n)]
    gold = rng.integers(1, 12, n)
    runs = runs_table(
        [
            dict(run_id=r, benchmark="b", modality=("text", "image")[i % 2],
                 category=("c1", "c2", "c3")[i % 3], system=("sv", "react")[i % 2],
                 topology=("multi", "single")[i % 2])
            for i, r in enumerate(ids)
        ]
    )  # fmt: skip
    steps = steps_table({r: int(rng.integers(1, 25)) for r in ids})
    splits = rng.choice(["train", "dev", "test"], n)
    labels = typed_table(
        [
            dict(run_id=r, decisive_agent="a", decisive_step=int(g), mode="m", split=str(s))
            for r, g, s in zip(ids, gold, splits, strict=True)
        ],
        LABELS,
        {"source": "injection"},
    )
    rows = []
    for name, p_agent, p_step, p_parse in (
        ("good", 0.7, 0.5, 1.0),
        ("bad", 0.2, 0.2, 1.0),
        ("random_ish", 0.5, 0.3, 0.8),
    ):
        for r, g in zip(ids, gold, strict=True):
            rows.append(
                dict(run_id=r, attributor=name, agent="a" if rng.random() < p_agent else "z",
                     step=int(g) if rng.random() < p_step else int(g) + 1,
                     parse_ok=bool(rng.random() < p_parse))
            )  # fmt: skip
    return labels, preds_table(rows), runs, steps


def test_speed() -> None:
    """Vectorised bootstrap: 1,000 items x 3 attributors, 2 breakdowns, 1000 resamples
    (about 0.5 s on two cores)."""
    data = synthetic(1000, seed=9)
    start = time.perf_counter()
    m = attribution_metrics(*data, by=["modality", "length_bin"])
    assert m.height > 0 and time.perf_counter() - start < 10
