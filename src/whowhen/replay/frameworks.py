"""Counterfactual replay of a framework system's natural failures, through the gateway.

A framework system has no scripted policy to propose the corrected step, so a model
writes it, as `whowhen blame` has one do for a user's own program
(`whowhen.correction`): for each agent step of a failed run, earliest first, the model
sees the run up to the step and the agent's own request for it (the recorded model call
whose answer holds it) and writes the step as it should have been. Where that differs
from the recorded step (the tool and its arguments for a tool call, the words for a
message), the run is warm-started through the gateway with only that step replaced
(`frameworks.stage.framework_replace`, the continuation stage's warm start: the calls
before it replayed from the recording and checked request by request, the later ones
live) and the benchmark's evaluator judges it. The first flip is the decisive step.

The probes are the scripted systems' (`probe.Probe`), capped by `replay.max_probes`;
a probe's tokens and cost are the steps from the corrected one on, as for a scripted
system, plus the correction call. The search stops at a prefix that no longer replays,
and at an infrastructure failure (the gateway, the framework's tools, a model without an
answer, the correcting model's included): that is recorded as `infra_error`, never as a
flip or a failure. A step no recorded answer holds (a CodeAgent's `final_answer`, called
by its own code) cannot be replaced through the gateway and is passed over.

The correcting model is the config's `agents.model`: every framework system needs it,
and it is the model the framework's agents ask through the gateway (under the test server,
the stand-in, which corrects a framework role with the reference policy's step).
`injection.generator` writes errors, not corrections, and is usually not a model.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import polars as pl

from whowhen.correction import SCHEMA, correction_prompt, parse_correction
from whowhen.errors import InfraError, WhowhenError, infra_reason
from whowhen.frameworks.stage import FrameworkShard, exchanges_from_frame, framework_replace
from whowhen.gateway.exchange import Exchange
from whowhen.models.types import ChatRequest, ChatResult, Message
from whowhen.registry import get_benchmark, pair_tools
from whowhen.replay.probe import Probe, Replay, _failed_probe, _probe, settled, unsettled
from whowhen.runtime import Action, Step
from whowhen.runtime.parallel import in_parallel
from whowhen.runtime.records import by_run, steps_from_rows
from whowhen.schema import canonical_json, stable_id


@dataclass(frozen=True)
class Replaying:
    """What replaying one failed run needs: the shard (gateway, adapter, models), the
    correcting model, the benchmark, the run's task and the tools its agents had."""

    shard: FrameworkShard
    corrector: Any
    bench: Any
    task: Any
    tools: tuple[dict[str, Any], ...]


def replay_framework_failures(
    failed: pl.DataFrame,
    steps: pl.DataFrame,
    exchanges: pl.DataFrame,
    bench_cfg: dict[str, Any],
    seed: int,
    max_probes: int,
    max_steps: int,
    models: Any,
) -> dict[str, Replay | str]:
    """run id -> its replay, or why it was not replayed, for the failed runs of framework
    systems (`failed`, with their `steps` and recorded model calls `exchanges`); up to the
    models' concurrency runs at a time, each run's probes one after another."""
    out: dict[str, Replay | str] = {}
    steps_of, calls_of = by_run(steps), by_run(exchanges)
    for system in sorted(set(failed["system"])):
        runs = list(failed.filter(pl.col("system") == system).sort("run_id").iter_rows(named=True))
        tasks = {
            (name, t.task_id): t
            for name in sorted({r["benchmark"] for r in runs})
            for t in get_benchmark(name, bench_cfg).make_tasks(bench_cfg, seed)
        }
        with FrameworkShard(system, models, max_steps) as shard:
            if models.default is None:
                raise WhowhenError(
                    f"system {system!r}: replaying its failures needs agents.model, the "
                    "model that writes the corrected steps",
                    field="agents.model",
                )

            def one(
                run: dict[str, Any], shard: FrameworkShard = shard, tasks: dict[Any, Any] = tasks
            ) -> Replay | str:
                task = tasks.get((run["benchmark"], run["task_id"]))
                if task is None:
                    return f"task {run['task_id']} not in this config"
                calls = calls_of.get(run["run_id"])
                if calls is None or calls.is_empty():
                    return f"no recorded model calls for run {run['run_id']}"
                bench = get_benchmark(run["benchmark"], bench_cfg)
                tools = pair_tools(run["system"], run["benchmark"], bench_cfg)
                replaying = Replaying(shard, models.default, bench, task, tools)
                rows = steps_of[run["run_id"]].sort("step").to_dicts()
                return replay_framework_run(
                    replaying, run["run_id"], rows, exchanges_from_frame(calls), max_probes
                )

            for run, result in zip(runs, in_parallel(one, runs, shard), strict=True):
                out[run["run_id"]] = result
    return out


def replay_framework_run(
    replaying: Replaying,
    run_id: str,
    rows: list[dict[str, Any]],
    calls: list[Exchange],
    max_probes: int,
) -> Replay:
    """Probe failed run `run_id` (its step rows, in order, and its recorded model calls)
    step by step, at most `max_probes` probes (see the module)."""
    recorded = steps_from_rows(rows)
    holder = {k: e for e in calls for k in e.steps}
    probes: list[Probe] = []
    for t, step in enumerate(recorded):
        if not step.is_agent_step or t not in holder:
            continue
        if len(probes) >= max_probes:
            return Replay(
                "no_single_decisive_step", f"probe cap reached ({max_probes})", tuple(probes)
            )
        prompt = correction_prompt(rows, t, holder[t].request, "failure")
        [asked] = replaying.corrector.complete(
            [ChatRequest((Message.text("user", prompt),), schema=SCHEMA, tag="replay")]
        )
        if not asked.ok:  # the model's outage, not the step's
            why = infra_reason(f"the correcting model did not answer at step {t}: {asked.error}")
            return Replay("infra_error", why, tuple(probes))
        try:
            corrected = _action(step.actor, parse_correction(asked.text or ""))
        except ValueError as exc:
            probes.append(_charged(_failed_probe(t, step, f"unreadable correction: {exc}"), asked))
            continue
        if _same(corrected, step):
            continue  # the model keeps the step: nothing to correct here
        probes.append(
            _charged(_warm_probe(replaying, run_id, recorded, calls, t, corrected), asked)
        )
        ended = settled(probes, "the framework")
        if ended is not None:
            return ended
    return unsettled(probes)


def _warm_probe(
    replaying: Replaying,
    run_id: str,
    recorded: list[Step],
    calls: list[Exchange],
    t: int,
    corrected: Action,
) -> Probe:
    """The probe of one warm start with step t corrected: its outcome from the gateway's
    replay of the prefix, the framework's run after it and the evaluator's verdict."""
    step = recorded[t]
    try:
        _, _, result = framework_replace(
            replaying.shard, replaying.bench, replaying.task, recorded, calls, t, corrected,
            stable_id("replay", run_id, t), replaying.tools,
        )  # fmt: skip
    except InfraError as exc:
        failed = _failed_probe(t, step, infra_reason(str(exc)))
        return dataclasses.replace(failed, outcome="infra_error", corrected=corrected)
    except WhowhenError as exc:  # the gateway cannot put the step in (no answer holds it)
        return dataclasses.replace(_failed_probe(t, step, str(exc)), corrected=corrected)
    return _probe(t, step, corrected, result)


def _charged(probe: Probe, asked: ChatResult) -> Probe:
    """`probe` with the correction call's tokens and cost added."""
    return dataclasses.replace(
        probe,
        tokens_in=probe.tokens_in + asked.usage.input_tokens,
        tokens_out=probe.tokens_out + asked.usage.output_tokens,
        cost_usd=round(probe.cost_usd + asked.cost_usd, 8),
    )


def _action(actor: str, corrected: dict[str, Any]) -> Action:
    tool = corrected["tool"]
    return Action(actor, corrected["content"], tool, corrected["arguments"] if tool else None)


def _same(corrected: Action, step: Step) -> bool:
    """Whether a correction keeps the step: the same tool call (its words aside), or for
    a message, the same words."""
    if corrected.tool or step.tool:
        return (corrected.tool, canonical_json(corrected.tool_args or {})) == (
            step.tool,
            canonical_json(step.tool_args or {}),
        )
    return corrected.content.strip() == str(step.content).strip()
