"""Framework systems in the pipeline: their rollouts and their warm starts, through one
gateway per shard.

A rollout records every model call (the `exchanges` table) beside the run's steps. A warm
start of an injection replays the parent's recorded calls up to the answer that holds the
injected step (each incoming request compared with the recorded one: the gateway refuses
a prefix whose prompt, observation or call order changed), answers that call with the
answer rewritten to hold the injected action, in the framework's own format, and asks the
models live after it. Nothing here knows a framework: the adapter does
(`frameworks.systems`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from whowhen.errors import WhowhenError
from whowhen.frameworks.base import FrameworkRun, run_framework
from whowhen.frameworks.systems import framework_version, make_adapter
from whowhen.gateway.exchange import Exchange
from whowhen.gateway.forward import client_forward
from whowhen.gateway.session import Plan
from whowhen.registry import played_by
from whowhen.runtime import Action, Step
from whowhen.runtime.warm_start import PrefixFidelity, WarmStartResult
from whowhen.schema import canonical_json, stable_id

Tools = tuple[dict[str, Any], ...]
"""Tool specs (name, description, parameters), as the benchmarks declare them."""


@dataclass
class FrameworkAgents:
    """What the runs table records of a framework system (an `AgentSystem`'s name,
    topology, policy and stats): the policy names the framework, its version and the
    models, so another version or model is another system."""

    name: str
    topology: str
    policy: str
    stats: dict[str, Any] = field(default_factory=dict)


class FrameworkShard:
    """One (benchmark, framework system) shard's gateway, adapter and models; a context
    manager (the gateway's port is held until the shard is done)."""

    def __init__(self, system: str, models: Any, max_turns: int) -> None:
        if models is None:
            raise WhowhenError(
                f"system {system!r} needs a model: set agents.model in the config",
                field="agents.model",
            )
        self.system, self.max_turns = system, max_turns
        self.adapter = make_adapter(system)
        clients = models.for_agents(self.adapter.agents, system)
        scripted = [a for a, c in clients.items() if not hasattr(c, "complete")]
        if scripted:
            raise WhowhenError(
                f"system {system!r}: a framework's agents are played by models, not the "
                f"reference policy ({', '.join(scripted)} in agents.roles)",
                field="agents.roles",
            )
        self.models = models
        self.concurrency = models.concurrency  # runs at once (in_parallel reads it)
        self.forward = client_forward(clients)
        ids = "+".join(dict.fromkeys(c.spec.model_id for c in clients.values()))
        self.policy = f"{framework_version(system)}/{ids}"
        # a job of scripted systems alone never starts the gateway's server, so
        # deferred: uvicorn and starlette
        from whowhen.gateway.server import Gateway

        self.gateway = Gateway()

    def __enter__(self) -> FrameworkShard:
        self.gateway.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.gateway.__exit__(*exc)

    def agents(self) -> FrameworkAgents:
        topology = "single" if len(self.adapter.agents) == 1 else "multi"
        return FrameworkAgents(self.system, topology, self.policy)

    def run(
        self, bench: Any, env: Any, run_id: str, tools: Tools, plan: Plan | None = None
    ) -> FrameworkRun:
        """One run of the framework on `env`'s task (a recording, or a warm start), its
        agents offered `tools` (`registry.pair_tools`: what the played system offers)."""
        prompts = dict(bench.prompts.get(self.adapter.plays, {}))
        return run_framework(
            self.adapter, env, tools, prompts, self.gateway, run_id, self.forward,
            self.max_turns, plan,
        )  # fmt: skip


def run_stats(run: FrameworkRun) -> dict[str, Any]:
    """The model calls of one run by how they were answered (the runs table's `meta`)."""
    sources = [e.source for e in run.session.exchanges]
    agent_steps = [s for s in run.episode.history if s.is_agent_step]
    return {
        "agent_steps": len(agent_steps),
        "calls": len(sources),
        "replayed": sources.count("replayed"),
        "injected": sources.count("injected"),
        "live": sources.count("live"),
    }


def exchange_rows(run_id: str, exchanges: list[Exchange]) -> list[dict[str, Any]]:
    """A run's model calls as rows of the exchanges table."""
    return [
        {
            "run_id": run_id,
            "index": e.index,
            "agent": e.agent,
            "source": e.source,
            "request": canonical_json(e.request),
            "message": canonical_json(e.message),
            "steps": list(e.steps),
            "tokens_in": e.input_tokens,
            "tokens_out": e.output_tokens,
            "cost_usd": e.cost_usd,
        }
        for e in exchanges
    ]


def exchanges_from_frame(frame: pl.DataFrame) -> list[Exchange]:
    """One run's recorded calls back as `Exchange`s, in call order."""
    return [
        Exchange(
            r["index"],
            r["agent"],
            json.loads(r["request"]),
            json.loads(r["message"]),
            r["source"],
            r["tokens_in"] or 0,
            r["tokens_out"] or 0,
            r["cost_usd"] or 0.0,
            False,
            list(r["steps"] or []),
        )
        for r in frame.sort("index").iter_rows(named=True)
    ]


def injection_plan(
    adapter: Any, recorded: list[Exchange], steps: list[Step], k: int, replacement: Action
) -> Plan:
    """The gateway's plan for injecting `replacement` at step `k`: replay the calls before
    the answer that holds step k, answer that call with the answer rewritten (its steps
    before k kept, then the replacement), then go live."""
    exchange = next((e for e in recorded if k in e.steps), None)
    if exchange is None:  # e.g. the CodeAgent's final_answer, called by its own code
        what = f" ({steps[k].tool})" if k < len(steps) and steps[k].tool else ""
        raise WhowhenError(
            f"step {k}{what} is not part of a recorded model answer (the framework made "
            "the call itself): the gateway cannot inject there",
            field="step",
        )
    if steps[k].actor != replacement.actor:
        raise WhowhenError(
            f"replacement actor {replacement.actor!r} differs from the recorded actor "
            f"{steps[k].actor!r}",
            field="replacement_action",
        )
    kept = [steps[j].as_action() for j in exchange.steps if j < k]
    message = adapter.write([*kept, replacement], exchange.message)
    return Plan(recorded, exchange.index, message, tuple(adapter.volatile))


def warm_start_result(run: FrameworkRun, recorded: list[Step], k: int) -> WarmStartResult:
    """The warm start as the continuation stage records it: every step before k compared
    with the recording (actor, kind, content, tool call). The gateway has already refused
    a differing request; this also catches a framework that did something else with an
    identical answer."""
    history = run.episode.history
    checked = matched = 0
    mismatch: int | None = None
    for i in range(k):
        checked += 1
        same = i < len(history) and _view(history[i]) == _view(recorded[i])
        matched += same
        if not same and mismatch is None:
            mismatch = i
    if run.session.failure and mismatch is None:
        mismatch = min(len(history), k)
    return WarmStartResult(run.episode, PrefixFidelity(k, checked, matched, mismatch))


def _view(step: Step) -> tuple[Any, ...]:
    return (step.actor, step.kind, step.content, step.tool, canonical_json(step.tool_args))


def framework_warm_start(
    framework: FrameworkShard,
    bench: Any,
    task: Any,
    inj: dict[str, Any],
    recorded: list[Step],
    calls: pl.DataFrame | None,
    tools: Tools,
) -> tuple[FrameworkAgents, Any, WarmStartResult]:
    """Warm-start injection `inj` (an injections row) into its parent framework run
    (`recorded` steps, `calls` its recorded model calls): (agents with the run's call
    counts as stats, environment, result). Raises WhowhenError when it cannot start."""
    if calls is None or calls.is_empty():
        raise WhowhenError(f"no recorded model calls for run {inj['parent_run_id']}")
    replacement = Action.from_json(inj["replacement_action"])
    run_id = stable_id("injected", inj["injection_id"])
    return framework_replace(
        framework, bench, task, recorded, exchanges_from_frame(calls), inj["step"],
        replacement, run_id, tools,
    )  # fmt: skip


def framework_replace(
    framework: FrameworkShard,
    bench: Any,
    task: Any,
    recorded: list[Step],
    calls: list[Exchange],
    k: int,
    replacement: Action,
    run_id: str,
    tools: Tools,
) -> tuple[FrameworkAgents, Any, WarmStartResult]:
    """The recorded run (`recorded` steps, `calls` its model calls) run again as `run_id`
    with step k replaced by `replacement`: an injected error, or the replay stage's
    corrected step. (agents with the run's call counts as stats, environment, result)."""
    plan = injection_plan(framework.adapter, calls, recorded, k, replacement)
    env = bench.make_env(task)
    run = framework.run(bench, env, run_id, tools, plan)
    agents = replace(framework.agents(), stats=run_stats(run))
    return agents, env, warm_start_result(run, recorded, k)


def is_framework(system: str) -> bool:
    return played_by(system) == "framework"
