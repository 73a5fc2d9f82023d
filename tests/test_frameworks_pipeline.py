"""Real agent frameworks through the whole pipeline (config/profiles/frameworks.yaml, made
small): three frameworks (smolagents, an AG2 group chat, a LangGraph graph) on arithmetic
(the profile adds table QA: its figures are in the README), played by the stand-in over
HTTP, the model writing the injected errors. Rollouts are recorded through the
gateway, errors injected into the recorded answers, every warm start replayed call by
call (100% prefix fidelity), the flipped runs attributed and reported. A run killed with
SIGKILL during the framework rollouts and resumed ends with the artifacts that a rerun
from scratch gives, and that rerun asks the model nothing (response cache)."""

from __future__ import annotations

import importlib.util
import io
import shutil
from pathlib import Path

import polars as pl
import pytest

from whowhen.standin.server import Behaviour, TestServer

from .conftest import ROOT
from .helpers import mock_model_config
from .profile_config import merged_profile
from .workdir import make_project, resume_run, run_artifacts, run_until_killed, snakemake

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        any(importlib.util.find_spec(p) is None for p in ("smolagents", "autogen", "langgraph")),
        reason="needs the frameworks extra (smolagents, ag2, langgraph)",
    ),
]

SYSTEMS = ["smolagents_react", "ag2_solver_verifier", "langgraph_solver_verifier"]
TARGET = "results/analysis/frameworks.csv"  # the analysis stage: the report and its tables


def _config(url: str) -> dict:
    config = mock_model_config(
        url,
        merged_profile(ROOT / "config/profiles/frameworks.yaml"),
        systems=SYSTEMS,
        llm={"max_concurrency": 1},
    )
    config["only_benchmarks"] = ["arithmetic"]  # each shard is four jobs, each a start-up
    config["benchmarks"]["arithmetic"] = {"n_tasks": 3, "min_ops": 2, "max_ops": 3}
    # two of the built-in attributors beside the model's: each is a job of its own, and
    # they read framework runs as they read any others (the profile runs them all)
    config["attribution"]["attributors"] = ["random", "error_signal"]
    config["injection"]["generator"] = "mock"  # the model writes the injected errors
    return config


def _rollouts_done(project: Path) -> int:
    return len(list((project / "results/rollouts").glob("*/*/exchanges.parquet")))


def test_frameworks_run_the_pipeline_killed_resumed_and_rerun(tmp_path: Path) -> None:
    with TestServer(Behaviour(latency_s=0.05)) as srv:
        project = make_project(tmp_path / "p", _config(srv.url))
        # killed while the framework rollouts are asking the model, then resumed
        run_until_killed(project, lambda: srv.completed >= 12, TARGET)
        assert _rollouts_done(project) < 3  # three shards: the kill came mid-rollouts
        srv.behaviour.latency_s = 0.0  # slow answers only to land the kill mid-rollouts
        resume_run(project, TARGET)
        resumed = run_artifacts(project)
        asked = srv.completed
        # a rerun from scratch (the results gone, the response cache kept): what an
        # uninterrupted run gives with these answers, and not one model call
        shutil.rmtree(project / "results")
        shutil.rmtree(project / "reports")
        proc = snakemake(project, TARGET, "--cores", "2")
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert srv.completed == asked
    again = run_artifacts(project)
    assert sorted(again) == sorted(resumed) and len(resumed) > 40
    for rel, value in resumed.items():
        if isinstance(value, pl.DataFrame):
            assert value.equals(again[rel]), rel
        else:
            assert value == again[rel], rel
    _check_results(project)


def _check_results(project: Path) -> None:
    table = pl.read_csv(io.BytesIO((project / TARGET).read_bytes()))
    assert set(table["system"]) == set(SYSTEMS)
    assert table["framework"].str.split(" ").list.first().n_unique() == 3
    assert set(table["benchmark"]) == {"arithmetic"}
    assert (table["success_rate"] == 1.0).all()  # the stand-in solves every task
    assert (table["warm_starts"] > 0).all() and (table["prefix_exact"] == 1.0).all()
    assert (table["drifted"] == 0).all() and table["first_drift"].is_null().all()
    assert (table["calls_replayed"] > 0).all() and (table["calls_live"] > 0).all()
    runs = pl.read_parquet(project / "results/dataset/runs.parquet")
    labels = pl.read_parquet(project / "results/dataset/labels.parquet")
    labelled = runs.join(labels, on="run_id")
    assert labelled.height > 0
    assert "multi" in set(labelled["topology"])  # a multi-agent framework's error
    assert (
        labelled.join(
            pl.read_parquet(project / "results/dataset/steps.parquet"),
            left_on=["run_id", "decisive_step"],
            right_on=["run_id", "step"],
        ).height
        == labelled.height
    )  # every gold step is a recorded step of its run
    # every agent step of a labelled run carries what producing it cost, the replayed
    # prefix and the injected step included: no free step marks the injection point
    steps = pl.read_parquet(project / "results/dataset/steps.parquet")
    agent_steps = steps.filter(pl.col("kind") != "observation", pl.col("actor") != "user")
    assert agent_steps.height > 0 and (agent_steps["tokens_in"] > 0).all()
    predictions = pl.read_parquet(project / "results/predictions/built/mock_all_at_once.parquet")
    assert predictions.height == labels.height
    assert "Agent frameworks" in (project / "reports/report.html").read_text()
