"""Rollouts stage: run one agent system on every task of one benchmark and record it all."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import polars as pl

from whowhen.assembly import agent_client, make_system
from whowhen.benchmarks.base import tasks_for
from whowhen.defaults import filled
from whowhen.frameworks.stage import FrameworkShard, exchange_rows, is_framework, run_stats
from whowhen.media import media_root
from whowhen.operators import slip_model
from whowhen.registry import SYSTEM_KINDS, get_benchmark, pair_tools, played_by_model
from whowhen.runtime import AgentSystem, run_episode
from whowhen.runtime.infra import check_infra_share, split_infra
from whowhen.runtime.parallel import SANDBOX_RUNS, in_parallel
from whowhen.runtime.records import run_row, step_rows
from whowhen.sandbox.run import ensure_available
from whowhen.schema import EXCHANGES, RUNS, SLIPS, STEPS, empty, stable_id, to_arrow, write_table

log = logging.getLogger(__name__)


def rollout_id(
    benchmark: str, task_id: str, system: str, policy: str, seed: int, slip_rate: float
) -> str:
    return stable_id("rollout", benchmark, task_id, system, policy, seed, slip_rate)


def run_rollouts(
    benchmark: str,
    system: str,
    bench_cfg: dict[str, Any],
    seed: int,
    slip_rate: float,
    max_steps: int,
    client: Any = None,
    slip_kind: str = "operators",
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """All rollouts of `system` on `benchmark`: (runs, steps, slips). Pure given its
    arguments (rendered media go to the content-addressed store). `slip_kind` names the slip
    model (`operators.SLIP_MODELS`; the pipeline's default is `natural`)."""
    bench = get_benchmark(benchmark, bench_cfg)
    tasks = tasks_for(bench.make_tasks(bench_cfg, seed), bench_cfg, system)

    def one(task: Any) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
        agent = make_system(
            system,
            benchmark,
            slip_rate=slip_rate,
            seed=seed,
            slip=slip_model(slip_kind),
            client=client,
            bench_cfg=bench_cfg,
        )
        env = bench.make_env(task)
        episode = run_episode(env, agent, max_steps)
        run_id = rollout_id(benchmark, task.task_id, system, agent.policy, seed, slip_rate)
        row = run_row(
            episode,
            env,
            agent,
            run_id=run_id,
            seed=seed,
            origin="rollout",
            parent_run_id=None,
            gold_answer=str(task.answer),
            question=task.question,
        )
        return row, step_rows(episode, run_id), _slip_rows(agent, run_id, benchmark, system)

    runs, steps, slips = [], [], []
    at_once = SANDBOX_RUNS if client is None and SYSTEM_KINDS.get(system).runs_code else 1
    done = in_parallel(one, tasks, client, at_once)
    for i, (row, step_part, slip_part) in enumerate(done, start=1):
        runs.append(row)
        steps += step_part
        slips += slip_part
        if i % 50 == 0 or i == len(tasks):
            log.info("rollouts %s/%s: %d/%d tasks", benchmark, system, i, len(tasks))
    return _rollout_tables(runs, steps, slips, benchmark, system)


def run_framework_rollouts(
    benchmark: str, system: str, bench_cfg: dict[str, Any], seed: int, max_turns: int, models: Any
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """All rollouts of framework system `system` on `benchmark`, through the gateway:
    (runs, steps, exchanges). A framework has no slip model: its errors are the models'."""
    bench = get_benchmark(benchmark, bench_cfg)
    tasks = tasks_for(bench.make_tasks(bench_cfg, seed), bench_cfg, system)
    tools = pair_tools(system, benchmark, bench_cfg)
    with FrameworkShard(system, models, max_turns) as shard:

        def one(task: Any) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
            env = bench.make_env(task)
            run_id = rollout_id(benchmark, task.task_id, system, shard.policy, seed, 0.0)
            run = shard.run(bench, env, run_id, tools)
            row = run_row(
                run.episode, env, replace(shard.agents(), stats=run_stats(run)), run_id=run_id,
                seed=seed, origin="rollout", parent_run_id=None, gold_answer=str(task.answer),
                question=task.question,
            )  # fmt: skip
            return row, step_rows(run.episode, run_id), exchange_rows(run_id, run.session.exchanges)

        runs, steps, exchanges = [], [], []
        for i, (row, step_part, calls) in enumerate(in_parallel(one, tasks, shard), start=1):
            runs.append(row)
            steps += step_part
            exchanges += calls
            if i % 10 == 0 or i == len(tasks):
                log.info("rollouts %s/%s: %d/%d tasks", benchmark, system, i, len(tasks))
    runs_df, steps_df, _ = _rollout_tables(runs, steps, [], benchmark, system)
    return runs_df, steps_df, pl.from_arrow(to_arrow(exchanges, EXCHANGES))


def _slip_rows(
    agent: AgentSystem, run_id: str, benchmark: str, system: str
) -> list[dict[str, Any]]:
    """The SLIPS rows of one rollout: every slip the agent's slip model made."""
    return [
        {
            "run_id": run_id,
            "benchmark": benchmark,
            "system": system,
            "step": slip.step,
            "agent": slip.original.actor,
            "mode": slip.mode,
            "original_action": slip.original.to_json(),
            "slipped_action": slip.slipped.to_json(),
        }
        for slip in getattr(agent, "slips", ())
    ]


def _rollout_tables(
    runs: list[dict[str, Any]],
    steps: list[dict[str, Any]],
    slips: list[dict[str, Any]],
    benchmark: str,
    system: str,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The collected rows as validated (runs, steps, slips) tables; logs the success count."""
    runs_df = pl.from_arrow(to_arrow(runs, RUNS))
    log.info(
        "rollouts %s/%s: %d runs, %d successful",
        benchmark,
        system,
        runs_df.height,
        runs_df["success"].sum(),
    )
    return (
        runs_df,
        pl.from_arrow(to_arrow(steps, STEPS)),
        pl.from_arrow(to_arrow(slips, SLIPS)),
    )


def start_tools(benchmark: str, bench_cfg: dict[str, Any]) -> None:
    """Start every tool environment of `benchmark` once (the sandbox every environment's
    `run_python` uses, then the benchmark's own, e.g. the SQL worker): a broken
    installation stops the shard in seconds with its cause, not after every run failed."""
    ensure_available()
    get_benchmark(benchmark, bench_cfg).preflight()


def set_apart_infra(
    runs: pl.DataFrame, steps: pl.DataFrame, limit: float, where: str
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(runs, steps, infra): the runs an infrastructure failure stopped leave the shard's
    runs and steps for a table of their own; more than `limit` of them fail the shard."""
    kept, infra = split_infra(runs)
    check_infra_share(runs["end_reason"].to_list(), runs.height, limit, where)
    if infra.height:
        steps = steps.filter(~pl.col("run_id").is_in(infra["run_id"].to_list()))
    return kept, steps, infra


def stage(params: dict[str, Any], inputs: Any, outputs: Any, wildcards: Any) -> None:
    """Snakemake edge: one (benchmark, system) shard. The `rollouts` section is filled from
    the config schema's defaults here (tests call this with a partial one)."""
    params = {**params, "rollouts": filled("rollouts", params["rollouts"])}
    media_root().mkdir(parents=True, exist_ok=True)  # a DVC output even for text-only runs
    benchmark, system = wildcards["benchmark"], wildcards["system"]
    start_tools(benchmark, params["bench"])
    client = _client_for(system, params)
    slips, exchanges = empty(SLIPS), empty(EXCHANGES)
    if is_framework(system):
        runs, steps, exchanges = run_framework_rollouts(
            benchmark, system, params["bench"], params["seed"],
            params["rollouts"]["max_steps"], client,
        )  # fmt: skip
    else:
        runs, steps, slips = run_rollouts(
            benchmark,
            system,
            params["bench"],
            params["seed"],
            params["rollouts"]["slip_rate"],
            params["rollouts"]["max_steps"],
            client=client,
            slip_kind=params["rollouts"]["slips"],
        )
    if client is not None:
        log.info("model calls: %s", client.stats.as_dict())
    where = f"rollouts {benchmark}/{system}"
    runs, steps, infra = set_apart_infra(runs, steps, params["rollouts"]["max_infra_share"], where)
    if infra.height:
        slips = slips.filter(~pl.col("run_id").is_in(infra["run_id"].to_list()))
    write_table(infra, RUNS, outputs["infra"])
    write_table(runs, RUNS, outputs["runs"])
    write_table(steps, STEPS, outputs["steps"])
    write_table(slips, SLIPS, outputs["slips"])
    write_table(exchanges, EXCHANGES, outputs["exchanges"])


def _client_for(system: str, params: dict[str, Any]) -> Any:
    if not played_by_model(system):
        return None
    return agent_client(params["agents"], params["llm"], params["models"])
