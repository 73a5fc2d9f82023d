"""Crash safety end to end: a real run is killed with SIGKILL twice (during the
continuation stage, then while the LLM attributor is calling the model), resumed each time,
and must end with the artifacts of an uninterrupted run (every result but the pages,
`workdir.BUT_PAGES`), repeating no completed model call.
Timing columns (`schema.TIMING_COLUMNS`) and the timing table are the only exceptions."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from whowhen.standin.server import Behaviour, TestServer

from .conftest import one_benchmark
from .helpers import mock_model_config
from .workdir import (
    BUT_PAGES,
    make_project,
    resume_run,
    run_artifacts,
    run_until_killed,
    snakemake,
    start_snakemake,
)

pytestmark = pytest.mark.slow  # end to end: python -m pytest -m 'not slow' skips it

CACHE = ".cache/whowhen/responses"


def _config(url: str) -> dict:
    """One benchmark; the model attributes one call at a time (slow enough to kill
    mid-way)."""
    return mock_model_config(
        url, one_benchmark(), protocol="step_by_step", llm={"max_concurrency": 1}
    )


def _cached(project: Path) -> int:
    root = project / CACHE
    return sum(1 for p in root.rglob("*.json") if "batches" not in p.parts) if root.exists() else 0


def _asked(srv: TestServer, start: int = 0) -> set[str]:
    """The distinct requests the server answered since `start` (identical prompts, e.g. a
    shared prefix of two injected runs in one round, are one question). An empty body is
    a request the kill cut off while it was being sent, not a question."""
    return {json.dumps(b, sort_keys=True) for b in srv.bodies[start:] if b}


def test_kill_9_twice_then_resume_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    with TestServer(Behaviour(latency_s=0.05)) as srv, TestServer(Behaviour()) as own:
        # the uninterrupted run goes alongside, against a server of its own
        clean = make_project(tmp_path / "clean", _config(own.url))
        plain = start_snakemake(clean, *BUT_PAGES, "--cores", "2")
        killed = make_project(tmp_path / "killed", _config(srv.url))
        try:
            start = _kill_twice_and_resume(killed, srv)
        finally:
            log, _ = plain.communicate(timeout=600)
        assert plain.returncode == 0, log[-3000:]
        questions = _asked(own)
        assert len(questions) == _cached(clean) > 20
        assert _asked(srv, start) == questions  # the same questions as the clean run
        assert _cached(killed) == _cached(clean)

    a, b = run_artifacts(clean), run_artifacts(killed)
    assert sorted(a) == sorted(b)
    assert len(a) > 50
    for rel, value in a.items():
        if isinstance(value, pl.DataFrame):
            assert value.equals(b[rel]), rel
        else:
            assert value == b[rel], rel
    preds = pl.read_parquet(killed / "results/predictions/built/mock_step_by_step.parquet")
    assert preds["parse_ok"].all() and preds.height > 0


def _kill_twice_and_resume(killed: Path, srv: TestServer) -> int:
    """Kill a run twice (mid-continuation, mid-attribution), then resume it; return where
    in the server's request log the second run began."""
    continuation = killed / "logs/continuation"
    # 1. mid-stage in the continuation: some shards started, the dataset not yet built
    run_until_killed(
        killed, lambda: continuation.exists() and any(continuation.rglob("*.log")), *BUT_PAGES
    )
    assert not (killed / "results/dataset/labels.parquet").exists()
    # 2. while the attributor calls the model: answers cached, predictions not written
    assert snakemake(killed, "--unlock").returncode == 0
    start = len(srv.bodies)
    run_until_killed(killed, lambda: _cached(killed) >= 10, *BUT_PAGES)
    srv.behaviour.latency_s = 0.0  # slow answers only to land the kills mid-run
    predictions = killed / "results/predictions/built/mock_step_by_step.parquet"
    assert not predictions.exists()
    before_kill = _asked(srv, start)
    resume_start = len(srv.bodies)
    resume_run(killed, *BUT_PAGES)
    again = _asked(srv, resume_start) & before_kill
    # a completed, cached call is never asked again; only the one in flight at the
    # kill (max_concurrency 1) may be
    assert len(again) <= 1, len(again)
    return start
