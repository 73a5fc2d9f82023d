"""The replay stage on a framework system's natural failures: a LangGraph react agent,
played over HTTP by the stand-in with its slip model on (a seeded share of its tool calls
mistyped), fails some arithmetic tasks on its own. For each failure the model writes each
agent step as it should have been; a changed step is warm-started through the gateway
(the recorded calls before it replayed, checked request by request) and the first flip
is the decisive step. A rerun asks the model nothing and writes the same bytes; an
outage of the framework's model or of the correcting model is infra, never a label."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from whowhen.assembly import agent_client
from whowhen.correction import CORRECTION_MARK
from whowhen.frameworks.stage import FrameworkShard, exchanges_from_frame, framework_replace
from whowhen.registry import SYSTEMS, get_benchmark, pair_tools
from whowhen.replay.stage import replay_failures, stage
from whowhen.rollouts import run_framework_rollouts
from whowhen.runtime import Action
from whowhen.runtime.records import steps_from_frame
from whowhen.schema import DECISIVE, EXCHANGES, PROBES, RUNS, STEPS, read_table, write_table
from whowhen.standin.responders import slipping_responder
from whowhen.standin.server import Behaviour, TestServer

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("langgraph") is None, reason="needs langgraph (frameworks extra)"
)

SYSTEM, BENCHMARK, SEED = "langgraph_react", "arithmetic", 0
CFG = {"n_tasks": 4, "min_ops": 2, "max_ops": 3}
SLIPS = (0.15, 0)  # the stand-in's slip rate inside the framework, and its seed
MAX_STEPS = 40


def _models(url: str, cache: Path) -> Any:
    return agent_client(
        {"model": "mock"},
        {"cache_dir": str(cache), "progress": False, "max_retries": 0, "max_concurrency": 2},
        {"mock": {"id": "openai-compatible/mock", "base_url": url}},
    )


@pytest.fixture(scope="module")
def rollouts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The framework's rollouts on the slipping stand-in, as the rollouts stage writes them."""
    folder = tmp_path_factory.mktemp("rollouts")
    with TestServer(Behaviour(responder=slipping_responder(*SLIPS))) as srv:
        tables = run_framework_rollouts(
            BENCHMARK, SYSTEM, CFG, SEED, MAX_STEPS, _models(srv.url, folder / "cache")
        )
    paths = {name: folder / f"{name}.parquet" for name in ("runs", "steps", "exchanges")}
    for path, table, spec in zip(paths.values(), tables, (RUNS, STEPS, EXCHANGES), strict=True):
        write_table(table, spec, path)
    return paths


def _params(url: str, cache: Path) -> dict[str, Any]:
    return {
        "bench": CFG,
        "seed": SEED,
        "rollouts": {"slip_rate": 0.0, "slips": "natural", "max_infra_share": 1.0},
        "replay": {"max_probes": 20, "max_steps": MAX_STEPS},
        "agents": {"model": "mock"},
        "llm": {"cache_dir": str(cache), "progress": False, "max_retries": 0},
        "models": {"mock": {"id": "openai-compatible/mock", "base_url": url}},
    }


def _replay(paths: dict[str, Path], params: dict[str, Any], out: Path) -> dict[str, Path]:
    outputs = {"probes": out / "probes.parquet", "decisive": out / "decisive.parquet"}
    stage(params, paths, outputs, {"benchmark": BENCHMARK, "system": SYSTEM})
    return outputs


def test_a_framework_failure_gets_its_decisive_step_by_replay(
    rollouts: dict[str, Path], tmp_path: Path
) -> None:
    runs, steps = read_table(rollouts["runs"], RUNS), read_table(rollouts["steps"], STEPS)
    exchanges = read_table(rollouts["exchanges"], EXCHANGES)
    failed = runs.filter(~pl.col("success"))
    assert failed.height >= 1, "the slipping stand-in failed no task: no natural failure"
    with TestServer(Behaviour(responder=slipping_responder(*SLIPS))) as srv:
        params = _params(srv.url, tmp_path / "cache")
        first = _replay(rollouts, params, tmp_path / "a")
        asked = srv.completed
        corrections = sum(CORRECTION_MARK in json.dumps(b) for b in srv.bodies)
        again = _replay(rollouts, params, tmp_path / "b")
        assert srv.completed == asked  # the rerun asks the model nothing (response cache)
        decisive = read_table(first["decisive"], DECISIVE)
        probes = read_table(first["probes"], PROBES)
        hit = decisive.filter(pl.col("status") == "decisive").row(0, named=True)
        # the decisive probe's warm start, once more: the prefix replayed exactly
        with FrameworkShard(SYSTEM, _models(srv.url, tmp_path / "cache"), MAX_STEPS) as shard:
            calls = exchanges_from_frame(exchanges.filter(pl.col("run_id") == hit["run_id"]))
            recorded = steps_from_frame(steps.filter(pl.col("run_id") == hit["run_id"]))
            task_id = runs.filter(pl.col("run_id") == hit["run_id"])["task_id"][0]
            tasks = get_benchmark(BENCHMARK, CFG).make_tasks(CFG, SEED)
            task = next(task for task in tasks if task.task_id == task_id)
            k, fix = hit["decisive_step"], Action.from_json(hit["corrected_action"])
            agents, _, warm = framework_replace(
                shard, get_benchmark(BENCHMARK, CFG), task, recorded, calls, k, fix, "again",
                pair_tools(SYSTEM, BENCHMARK, CFG),
            )  # fmt: skip
        assert srv.completed == asked
    for name in ("probes", "decisive"):  # same config, the same bytes
        assert first[name].read_bytes() == again[name].read_bytes(), name

    assert sorted(decisive["run_id"]) == sorted(failed["run_id"])
    found = decisive.filter(pl.col("status") == "decisive")
    assert found.height >= 1 and corrections >= found.height
    assert set(probes["outcome"]) <= {"flipped", "still_failed"}  # no drift, outage or error
    reference = SYSTEMS["react"][BENCHMARK]()
    for row in found.iter_rows(named=True):
        run = steps_from_frame(steps.filter(pl.col("run_id") == row["run_id"]))
        mine = probes.filter(pl.col("run_id") == row["run_id"]).sort("step")
        assert mine["outcome"].to_list() == ["still_failed"] * (mine.height - 1) + ["flipped"]
        assert mine["step"][-1] == row["decisive_step"] and row["n_probes"] == mine.height
        t = row["decisive_step"]
        erroneous = Action.from_json(row["erroneous_action"])
        corrected = Action.from_json(row["corrected_action"])
        assert erroneous == run[t].as_action() and row["decisive_agent"] == "assistant"
        # the agent's own slip, and the slip-free reference's step for the same history
        assert corrected == reference.next_action(run[:t]) and corrected != erroneous
        assert row["mode"] is not None and row["category"] is not None
    # the prefix: every call before the corrected step answered from the recording (the
    # requests checked), the steps before it the recorded ones, and the run now succeeds
    before = next(e.index for e in calls if k in e.steps)
    assert warm.fidelity.exact and warm.fidelity.checked == k
    assert (agents.stats["replayed"], agents.stats["injected"]) == (before, 1)
    assert warm.episode.history[k].as_action() == fix and warm.episode.verdict.success


def _failing_framework_turns(prompt: str, schema: dict[str, Any] | None) -> str:
    """The stand-in answering corrections, but no framework turn (a 500 from the server)."""
    if CORRECTION_MARK not in prompt:
        raise RuntimeError("the model is down")
    return slipping_responder(*SLIPS)(prompt, schema)


def test_an_outage_during_replay_is_infra_never_a_flip_or_a_failure(
    rollouts: dict[str, Path], tmp_path: Path
) -> None:
    runs, steps = read_table(rollouts["runs"], RUNS), read_table(rollouts["steps"], STEPS)
    exchanges = read_table(rollouts["exchanges"], EXCHANGES)

    def replay(behaviour: Behaviour, cache: str) -> tuple[pl.DataFrame, pl.DataFrame]:
        with TestServer(behaviour) as srv:
            return replay_failures(
                runs, steps, CFG, SEED, 0.0, 20, MAX_STEPS, exchanges=exchanges,
                models=_models(srv.url, tmp_path / cache),
            )  # fmt: skip

    # the framework's model fails after the corrected step: the probe is an outage
    probes, decisive = replay(Behaviour(responder=_failing_framework_turns), "live")
    live = probes.filter(pl.col("outcome") == "infra_error")
    assert live.height >= 1 and live["end_reason"].str.starts_with("infra_error").all()
    assert "still_failed" not in set(probes["outcome"])
    stopped = decisive.filter(pl.col("run_id").is_in(live["run_id"].to_list()))
    assert set(stopped["status"]) == {"infra_error"} and stopped["decisive_step"].is_null().all()
    # the correcting model fails: no probe at all, and no label
    probes, decisive = replay(Behaviour(fail_rate=1.0, faults=("500",)), "correct")
    assert probes.is_empty() and set(decisive["status"]) == {"infra_error"}
    assert decisive["reason"].str.contains("the correcting model did not answer").all()
