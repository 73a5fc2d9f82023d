"""Counterfactual oracle: attribution by replaying the environment, not by reading the log.

For each failed run it asks the question the gold label answers: which single agent step,
if corrected, makes the run succeed? The replay machinery is the replay stage's
(`whowhen.replay.replay_run`): from the earliest agent step on, the reference policy (the
system's scripted policy with slips off) proposes its action for exactly the visible
history; where that differs from the record, the run is warm-started from the recorded
prefix with only that action replaced and played to the end. The first correction that
flips the outcome is the prediction. The continuation is the slip-free reference, as in
the continuation stage that built the injected runs, so on injected data whose prefix
came from a slip-free rollout the oracle recovers the injected step exactly: it is an
upper bound and a check that the labels are what replay says they are.

It needs the environment: the built-in benchmark, its config section and the seed that
made the tasks. Runs it cannot replay (LLM-played systems, imported trajectories, unknown
benchmarks or tasks, prefix drift) get no prediction, with the reason recorded.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any

import polars as pl

from whowhen.attribution.baselines import prediction_row
from whowhen.attribution.kinds import ATTRIBUTORS, Attributor, AttributorContext
from whowhen.schema import PREDICTIONS, to_arrow

if TYPE_CHECKING:
    from whowhen.replay.probe import Replay
    from whowhen.runtime import Step

log = logging.getLogger(__name__)

NAME = "counterfactual_oracle"


def replay_support(run: dict[str, Any], benchmarks: dict[str, Any]) -> str | None:
    """Why `run` cannot be replayed (None when it can): a scripted system on a built-in
    benchmark that this config generates."""
    # the oracle's entry is read by the report and `whowhen --help`: registering it is cheap
    # deferred: the registry loads every benchmark package
    from whowhen.registry import BENCHMARKS, played_by_model, policies

    system, bench = run["system"], run["benchmark"]
    if run.get("origin") == "imported":
        return "imported trajectory: no environment to replay"
    if played_by_model(system):
        return f"system {system!r} is played by a model: no scripted reference policy"
    if bench not in BENCHMARKS:
        return f"benchmark {bench!r} is not a built-in benchmark: no environment to replay"
    if bench not in policies(system):
        return f"no scripted reference policy for system {system!r} on {bench!r}"
    if bench not in benchmarks:
        return f"benchmark {bench!r} is not in this config's benchmarks section"
    if "file" in (benchmarks[bench] or {}):
        return f"benchmark {bench!r} is a dataset file: no scripted policy"
    return None


def oracle_attribute(
    runs: pl.DataFrame,
    steps: pl.DataFrame,
    benchmarks: dict[str, Any],
    seed: int,
    max_probes: int = 60,
    max_steps: int = 80,
    name: str = NAME,
) -> pl.DataFrame:
    """One prediction per run (PREDICTIONS rows). `benchmarks` is the config's benchmarks
    section and `seed` its top-level seed (what generated the tasks); the reference and the
    continuation are `make_system(system, benchmark, seed=seed, bench_cfg=...)`, slip-free.
    The predicted mode is the offline classifier's, from the corrected action."""
    # deferred: the replay machinery (every benchmark's environment) loads when it runs
    from whowhen.runtime.records import steps_from_frame

    by_run = {key[0]: frame for key, frame in steps.group_by("run_id")}
    tasks: dict[str, dict[str, Any]] = {}
    rows = []
    started = time.perf_counter()
    for run in runs.sort("run_id").iter_rows(named=True):
        row = _empty_row(run["run_id"], name)
        rows.append(row)
        task, why = _task_or_reason(run, benchmarks, tasks, seed)
        if why is not None:
            row.update(reason=why, raw_output=json.dumps({"status": "skipped"}))
            continue
        frame = by_run.get(run["run_id"])
        recorded = steps_from_frame(frame) if frame is not None else []
        cfg = benchmarks[run["benchmark"]]
        result = _replay(run, recorded, cfg, task, seed, max_probes, max_steps)
        _record_replay(row, result, recorded, max_probes)
    n_ok = sum(r["parse_ok"] for r in rows)
    log.info(
        "%s: %d of %d runs attributed by replay in %.1f s",
        name,
        n_ok,
        len(rows),
        time.perf_counter() - started,
    )
    return pl.from_arrow(to_arrow(rows, PREDICTIONS))


def _task_or_reason(
    run: dict[str, Any],
    benchmarks: dict[str, Any],
    tasks: dict[str, dict[str, Any]],
    seed: int,
) -> tuple[Any, str | None]:
    """(the run's task, None), or (None, why the oracle does not replay it). A benchmark's
    tasks are generated into `tasks` the first time one of its runs is replayed."""
    why = replay_support(run, benchmarks)
    if why is None and run.get("success"):
        why = "the run succeeded: nothing to attribute"
    if why is not None:
        return None, why
    # deferred: the registry loads every benchmark package (see replay_support)
    from whowhen.registry import get_benchmark

    cfg = benchmarks[run["benchmark"]]
    if run["benchmark"] not in tasks:
        bench = get_benchmark(run["benchmark"], cfg)
        tasks[run["benchmark"]] = {t.task_id: t for t in bench.make_tasks(cfg, seed)}
    task = tasks[run["benchmark"]].get(run["task_id"])
    if task is None:
        return None, f"task {run['task_id']} is not generated by this config and seed"
    return task, None


def _record_replay(
    row: dict[str, Any], result: Replay, recorded: list[Step], max_probes: int
) -> None:
    """Fill a prediction row from the replay: the decisive (agent, step, mode), or why none."""
    # deferred: the replay machinery loads when the oracle runs
    from whowhen.replay.classify import classify

    hit = result.decisive
    raw: dict[str, Any] = {"status": result.status, "n_probes": len(result.probes)}
    if hit is None:
        row.update(reason=f"{result.status}: {result.reason}")
    else:
        mode = classify(hit.recorded, hit.corrected, recorded[: hit.step])
        raw |= {"agent": hit.agent, "step": hit.step, "corrected": hit.corrected.to_json()}
        row.update(
            agent=hit.agent,
            step=hit.step,
            mode=mode,
            reason=f"correcting step {hit.step} flips the run "
            f"(probe {len(result.probes)} of at most {max_probes})",
            parse_ok=True,
        )
    # wall time goes to the log, not the table: the same inputs give the same bytes
    row.update(raw_output=json.dumps(raw, sort_keys=True))


def _replay(
    run: dict[str, Any],
    recorded: list[Any],
    cfg: dict[str, Any],
    task: Any,
    seed: int,
    max_probes: int,
    max_steps: int,
) -> Replay:
    # deferred: the replay machinery and the systems load when the oracle runs
    from whowhen.assembly import make_system
    from whowhen.registry import get_benchmark
    from whowhen.replay.probe import replay_run

    bench = get_benchmark(run["benchmark"], cfg)

    def policy() -> Any:  # slip-free: the policy that played the injected continuations
        return make_system(run["system"], run["benchmark"], seed=seed, bench_cfg=cfg)

    return replay_run(
        recorded, lambda: bench.make_env(task), policy(), policy, max_probes, max_steps
    )


def _empty_row(run_id: str, name: str) -> dict[str, Any]:
    return prediction_row(run_id, name)


@ATTRIBUTORS.register(
    NAME, protocol="oracle", family="replay", section="learned", needs_environment=True
)
def _oracle(ctx: AttributorContext) -> Attributor:
    """The replay oracle with the environment the config made the tasks in."""
    params = ctx.params
    return lambda runs, steps: oracle_attribute(
        runs,
        steps,
        params["benchmarks"],
        params["seed"],
        params["replay"]["max_probes"],
        params["replay"]["max_steps"],
    )
