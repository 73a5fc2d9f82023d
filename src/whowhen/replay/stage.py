"""The replay stage over one (benchmark, system) shard: every failed rollout is replayed
counterfactually; one `decisive` row per failure and every probe are written.

A scripted system's reference policy proposes each corrected step (`probe`); a framework
system's are written by the config's `agents.model` and replayed through the gateway
(`replay.frameworks`); a model-played (`llm_*`) system's runs are not replayed."""

from __future__ import annotations

import logging
from typing import Any

import polars as pl

from whowhen.assembly import agent_client, make_system
from whowhen.benchmarks.base import Benchmark
from whowhen.frameworks.stage import is_framework
from whowhen.operators import slip_model
from whowhen.registry import get_benchmark, played_by_model
from whowhen.replay.classify import classify, describe
from whowhen.replay.frameworks import replay_framework_failures
from whowhen.replay.probe import Probe, Replay, probe_rows, replay_run
from whowhen.runtime import Step
from whowhen.runtime.infra import check_infra_share
from whowhen.runtime.records import steps_from_frame
from whowhen.schema import (
    DECISIVE,
    EXCHANGES,
    PROBES,
    RUNS,
    STEPS,
    empty,
    read_table,
    to_arrow,
    write_table,
)

log = logging.getLogger(__name__)


def replay_failures(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    bench_cfg: dict[str, Any],
    seed: int,
    slip_rate: float,
    max_probes: int,
    max_steps: int,
    slip_kind: str = "operators",
    exchanges: pl.DataFrame | None = None,
    models: Any = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(probes, decisive) for the failed runs of one shard. Pure given its arguments (and,
    for a framework system, its `models`' answers: the response cache makes a rerun ask
    nothing). `slip_kind`: the slip model the rollouts used (the agent replays with it).
    A framework system's runs replay through the gateway from their recorded model calls
    (`exchanges`), corrected by `models.default` (`replay.frameworks`)."""
    failed = runs.filter(~pl.col("success")).sort("run_id")
    probes: list[dict[str, Any]] = []
    decisive: list[dict[str, Any]] = []
    tasks: dict[tuple[str, str], Any] = {}
    frameworks = [s for s in sorted(set(failed["system"])) if is_framework(s)]
    framework = replay_framework_failures(
        failed.filter(pl.col("system").is_in(frameworks)),
        steps, exchanges if exchanges is not None else empty(EXCHANGES),
        bench_cfg, seed, max_probes, max_steps, models,
    )  # fmt: skip
    for i, run in enumerate(failed.iter_rows(named=True), start=1):
        row = _row(run)
        decisive.append(row)
        if run["run_id"] in framework:
            found = framework[run["run_id"]]
            if isinstance(found, str):
                row.update(status="skipped", reason=found)
                continue
            recorded = steps_from_frame(steps.filter(pl.col("run_id") == run["run_id"]))
            probes += _record(row, run["run_id"], found, recorded)
            continue
        if played_by_model(run["system"]):
            row.update(status="skipped", reason="no scripted reference policy for a model run")
            continue
        bench = get_benchmark(run["benchmark"], bench_cfg)
        if not any(k[0] == bench.name for k in tasks):
            tasks.update({(bench.name, t.task_id): t for t in bench.make_tasks(bench_cfg, seed)})
        task = tasks.get((bench.name, run["task_id"]))
        if task is None:
            row.update(status="skipped", reason=f"task {run['task_id']} not in this config")
            continue
        recorded = steps_from_frame(steps.filter(pl.col("run_id") == run["run_id"]))
        result = _replay(
            run,
            recorded,
            bench,
            task,
            bench_cfg,
            seed,
            (slip_rate, slip_kind),
            max_probes,
            max_steps,
        )
        probes += _record(row, run["run_id"], result, recorded)
        if i % 25 == 0 or i == failed.height:
            log.info("replay: %d/%d failed runs", i, failed.height)
    return (
        pl.from_arrow(to_arrow(probes, PROBES)),
        pl.from_arrow(to_arrow(decisive, DECISIVE)),
    )


def _replay(
    run: dict[str, Any],
    recorded: list[Step],
    bench: Benchmark,
    task: Any,
    bench_cfg: dict[str, Any],
    seed: int,
    slipping: tuple[float, str],
    max_probes: int,
    max_steps: int,
) -> Replay:
    """Replay one failed run: the slip-free reference proposes, the agent as it was (same
    slip model and seed) plays each probe's continuation."""

    def agent(run: dict[str, Any] = run) -> Any:
        return make_system(
            run["system"],
            run["benchmark"],
            slip_rate=slipping[0],
            seed=seed,
            slip=slip_model(slipping[1]),
            bench_cfg=bench_cfg,
        )

    reference = make_system(run["system"], run["benchmark"], bench_cfg=bench_cfg)
    return replay_run(
        recorded,
        lambda task=task, bench=bench: bench.make_env(task),
        reference,
        agent,
        max_probes,
        max_steps,
    )


def _record(
    row: dict[str, Any], run_id: str, result: Replay, recorded: list[Step]
) -> list[dict[str, Any]]:
    """Fill the run's decisive `row` from its replay; its probes' rows."""
    row.update(status=result.status, reason=result.reason, n_probes=len(result.probes))
    hit = result.decisive
    if hit is not None:
        row.update(_decisive_fields(hit, recorded))
    return probe_rows(run_id, result)


def _decisive_fields(hit: Probe, recorded: list[Step]) -> dict[str, Any]:
    """The decisive row's step, agent, actions and offline-classified mode for a flip."""
    mode = classify(hit.recorded, hit.corrected, recorded[: hit.step])
    return dict(
        decisive_step=hit.step,
        decisive_agent=hit.agent,
        action_type=hit.recorded.tool or "message",
        erroneous_action=hit.recorded.to_json(),
        corrected_action=hit.corrected.to_json(),
        mode=mode,
        category=mode.split(".", 1)[0] if mode else None,
        description=describe(hit.recorded, hit.corrected),
    )


def _row(run: dict[str, Any]) -> dict[str, Any]:
    return {
        "run_id": run["run_id"],
        "benchmark": run["benchmark"],
        "system": run["system"],
        "modality": run["modality"],
        "status": "no_single_decisive_step",
        "reason": None,
        "n_probes": 0,
    }


def stage(params: dict[str, Any], inputs: Any, outputs: Any, wildcards: Any) -> None:
    """Snakemake edge: one (benchmark, system) shard."""
    framework = is_framework(wildcards["system"])
    models = agent_client(params["agents"], params["llm"], params["models"]) if framework else None
    probes, decisive = replay_failures(
        read_table(inputs["runs"], RUNS),
        read_table(inputs["steps"], STEPS),
        params["bench"],
        params["seed"],
        params["rollouts"]["slip_rate"],
        params["replay"]["max_probes"],
        params["replay"]["max_steps"],
        slip_kind=params["rollouts"].get("slips", "natural"),
        exchanges=read_table(inputs["exchanges"], EXCHANGES),
        models=models,
    )
    if models is not None:
        log.info("model calls (corrections and live continuations): %s", models.stats.as_dict())
    where = f"replay {wildcards['benchmark']}/{wildcards['system']}"
    counts = decisive["status"].value_counts(sort=True).rows()
    log.info("%s: %s", where, dict(counts))
    infra = decisive.filter(pl.col("status") == "infra_error")["reason"].to_list()
    check_infra_share(infra, decisive.height, params["rollouts"]["max_infra_share"], where)
    write_table(probes, PROBES, outputs["probes"])
    write_table(decisive, DECISIVE, outputs["decisive"])
