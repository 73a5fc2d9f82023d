"""Model-played systems through the whole workflow over real HTTP: a solver/verifier team
and an orchestrator team from rollouts to attribution, and a model that never succeeds
(an empty dataset is a result: exit 0, a report and notebooks that say so)."""

from __future__ import annotations

import polars as pl
import pytest

from whowhen.standin.server import Behaviour, TestServer

from .helpers import mock_model_config
from .responders import looping
from .workdir import make_project, snakemake

pytestmark = pytest.mark.slow


def _config(url: str, systems: list[str], benchmarks: dict) -> dict:
    """The model plays every agent (one control rerun per flipped item), without native
    tool calls, and attributes; no feedback pairs."""
    return mock_model_config(
        url,
        benchmarks=benchmarks,
        systems=systems,
        agents={"model": "mock", "controls": 1},
        feedback={"benchmarks": [], "systems": [], "sources": ["none"]},
        llm={"max_concurrency": 8},
        native_tools=False,
    )


def test_model_played_teams_run_from_rollouts_to_attribution(tmp_path) -> None:
    benchmarks = {
        "arithmetic": {"n_tasks": 5, "min_ops": 2, "max_ops": 3},
        "doc_qa": {"n_tasks": 4},
    }
    with TestServer(Behaviour(native_tools=False)) as srv:
        config = _config(srv.url, ["llm_solver_verifier", "llm_orchestrator"], benchmarks)
        project = make_project(tmp_path / "p", config)
        proc = snakemake(project, "attribution_all", "--cores", "2")
        assert proc.returncode == 0, proc.stderr[-3000:]
    res = project / "results"
    for bench, system in (("arithmetic", "llm_solver_verifier"), ("doc_qa", "llm_orchestrator")):
        runs = pl.read_parquet(res / f"rollouts/{bench}/{system}/runs.parquet")
        assert runs["success"].all() and (runs["topology"] == "multi").all()
        steps = pl.read_parquet(res / f"rollouts/{bench}/{system}/steps.parquet")
        assert steps["actor"].n_unique() > 3 and (steps["tokens_in"] > 0).any()
    cont = pl.read_parquet(res / "continuation/continuations.parquet")
    valid = cont.filter(pl.col("status") != "invalid")
    assert valid.height > 0 and valid["prefix_exact"].all()
    flipped = cont.filter(pl.col("status") == "flipped")
    assert (flipped["controls_run"] == 1).all()  # each flipped item was checked
    labels = pl.read_parquet(res / "dataset/labels.parquet")
    runs = pl.read_parquet(res / "dataset/runs.parquet")
    assert set(runs["system"]) == {"llm_solver_verifier", "llm_orchestrator"}
    assert labels.height == runs.height > 0
    preds = pl.read_parquet(res / "predictions/built/mock_all_at_once.parquet")
    assert preds.height == labels.height and preds["parse_ok"].all()


def test_a_model_that_never_succeeds_gives_an_empty_dataset_and_a_report(tmp_path) -> None:
    benchmarks = {"arithmetic": {"n_tasks": 3, "min_ops": 2, "max_ops": 3}}
    with TestServer(Behaviour(responder=looping, native_tools=False)) as srv:
        project = make_project(tmp_path / "p", _config(srv.url, ["llm_react"], benchmarks))
        proc = snakemake(project, "--cores", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    said = [line for line in proc.stderr.splitlines() if "nothing to label" in line]
    assert len(said) == 1, proc.stderr[-3000:]
    assert pl.read_parquet(project / "results/dataset/labels.parquet").is_empty()
    report = (project / "reports/report.html").read_text()
    assert "Nothing to label" in report
    for notebook in ("attribution", "dataset"):
        assert (project / f"reports/notebooks/{notebook}.html").stat().st_size > 0
