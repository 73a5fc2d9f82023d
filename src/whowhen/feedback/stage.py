"""Snakemake edge of the feedback stage: one (benchmark, system) shard, every source."""

from __future__ import annotations

import logging
from typing import Any

import polars as pl

from whowhen.assembly import agent_client
from whowhen.attribution.factory import Attributors, llm_runner
from whowhen.attribution.kinds import Attributor
from whowhen.attribution.llm import LLMAttributor
from whowhen.feedback.attempts import Setting
from whowhen.feedback.loop import Context, originals, run_feedback
from whowhen.io import write_json
from whowhen.registry import get_benchmark, played_by
from whowhen.runtime.infra import check_infra_share
from whowhen.schema import FEEDBACK, RUNS, STEPS, read_table, write_table

log = logging.getLogger("whowhen.feedback")


def attributors(
    sources: list[str], system: str, params: dict[str, Any], tracer_model: str | None
) -> dict[str, Attributor]:
    """The configured attributors the sources name, plus `self_critique` for an LLM-played
    system (its own model, the all-at-once protocol)."""
    configured = Attributors(params, tracer_model)
    named = configured.names()
    out = {n: configured.make(n) for n in sources if n in named}
    if "self_critique" in sources and played_by(system) == "model":
        own = LLMAttributor("self_critique", params["agents"]["model"])
        out["self_critique"] = llm_runner(own, params)
    return out


def stage(params: dict[str, Any], inputs: Any, outputs: Any, wildcards: Any) -> None:
    """Rerun the shard's failed rollouts with every configured source's feedback."""
    benchmark, system = wildcards["benchmark"], wildcards["system"]
    fb = params["feedback"]
    bench_cfg = params["bench"]
    bench = get_benchmark(benchmark, bench_cfg)
    tasks = {t.task_id: t for t in bench.make_tasks(bench_cfg, params["seed"])}
    client = None
    if played_by(system) == "model":
        client = agent_client(params["agents"], params["llm"], params["models"])
    setting = Setting(
        benchmark,
        system,
        bench,
        bench_cfg,
        params["rollouts"]["slip_rate"],
        fb["persistence"],
        params["rollouts"]["max_steps"],
        client,
        params["rollouts"]["slips"],
    )
    ctx = Context(
        setting,
        fb["rounds"],
        fb["seed"],
        list(fb["sources"]),
        attributors(fb["sources"], system, params, inputs.get("tracer_model") or None),
        params["replay"]["max_probes"],
        params["replay"]["max_steps"],
    )
    failed = originals(read_table(inputs["runs"], RUNS), read_table(inputs["steps"], STEPS), tasks)
    log.info(
        "feedback %s/%s: %d failed rollouts, sources %s",
        benchmark,
        system,
        len(failed),
        ", ".join(ctx.sources),
    )
    attempts, runs, steps = run_feedback(ctx, failed)
    limit = params["rollouts"]["max_infra_share"]
    check_infra_share(ctx.infra, attempts.height, limit, f"feedback {benchmark}/{system}")
    if client is not None:
        log.info("model calls (agent): %s", client.stats.as_dict())
    final = attempts.group_by("source").agg(pl.col("task_id").filter(pl.col("success")).n_unique())
    log.info("feedback %s/%s solved per source: %s", benchmark, system, dict(final.iter_rows()))
    write_table(attempts, FEEDBACK, outputs["attempts"])
    write_table(runs, RUNS, outputs["runs"])
    write_table(steps, STEPS, outputs["steps"])


def manifest_stage(params: dict, inputs: dict, outputs: dict, wildcards: dict) -> None:
    """Snakemake edge: the feedback attempts per shard. Also gives DVC an output when no
    pair is configured (`feedback.benchmarks: []`), where the stage writes nothing else."""
    summary = {
        shard: {"attempts": read_table(path, FEEDBACK).height}
        for shard, path in zip(params["shards"], inputs["attempts"], strict=True)
    }
    write_json(outputs["manifest"], summary)
