"""Convert recorded episodes to rows of the runs/steps tables and back."""

from __future__ import annotations

import json
from typing import Any

import polars as pl

from whowhen.errors import is_infra
from whowhen.runtime.episode import Episode
from whowhen.runtime.interfaces import AgentSystem, Environment, Verdict
from whowhen.runtime.types import Step, StepCost
from whowhen.schema import canonical_json


def run_row(
    episode: Episode,
    env: Environment,
    system: AgentSystem,
    *,
    run_id: str,
    seed: int,
    origin: str,
    parent_run_id: str | None,
    gold_answer: str | None,
    question: str | None = None,
) -> dict[str, Any]:
    verdict = episode.verdict
    if verdict is None and is_infra(episode.end_reason):  # stopped before it could be judged
        verdict = Verdict(False, 0.0, None)
    assert verdict is not None, "evaluate the episode before recording it"
    return {
        "run_id": run_id,
        "benchmark": env.benchmark,
        "subset": None,
        "task_id": env.task_id,
        "question": question,
        "modality": env.modality,
        "category": env.category,
        "system": system.name,
        "topology": system.topology,
        "policy": system.policy,
        "seed": seed,
        "origin": origin,
        "parent_run_id": parent_run_id,
        "success": verdict.success,
        "score": verdict.score,
        "final_answer": verdict.final_answer,
        "gold_answer": gold_answer,
        "n_steps": len(episode.history),
        "end_reason": episode.end_reason,
        "tokens_in": sum(s.cost.tokens_in for s in episode.history if s.cost),
        "tokens_out": sum(s.cost.tokens_out for s in episode.history if s.cost),
        "cost_usd": round(sum(s.cost.cost_usd for s in episode.history if s.cost), 10),
        # a model-played system's counts (unreadable turns, trimmed observations)
        "meta": canonical_json(getattr(system, "stats", None)),
    }


def step_rows(episode: Episode, run_id: str) -> list[dict[str, Any]]:
    """Per-step model usage for model-played agents; scripted policies make no model calls,
    so theirs are zero, not missing."""
    return [
        {
            "run_id": run_id,
            "step": s.step,
            "actor": s.actor,
            "role": _role(s),
            "kind": s.kind,
            "content": s.content,
            "tool": s.tool,
            "tool_args": canonical_json(s.tool_args),
            "media": list(s.media),
            "tokens_in": s.cost.tokens_in if s.cost else 0,
            "tokens_out": s.cost.tokens_out if s.cost else 0,
            "cost_usd": s.cost.cost_usd if s.cost else 0.0,
            "latency_s": s.cost.latency_s if s.cost else 0.0,
        }
        for s in episode.history
    ]


def _role(step: Step) -> str:
    """A chat-style role, as Who&When and OpenAI logs carry one."""
    if step.kind == "observation":
        return "tool"
    return "assistant" if step.is_agent_step else "user"


def by_run(frame: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """`frame` (steps, candidates, ...) split by `run_id`: one split, not one filter per
    run, which made stages quadratic in the number of runs."""
    return {key[0]: part for key, part in frame.group_by("run_id", maintain_order=True)}


def steps_from_frame(frame: pl.DataFrame) -> list[Step]:
    """One run's steps (already filtered to its run_id) as runtime Steps, in order."""
    return steps_from_rows(frame.sort("step").to_dicts())


def steps_from_rows(rows: list[dict[str, Any]]) -> list[Step]:
    """Step-table rows (dicts, in order) as runtime Steps."""
    return [
        Step(
            r["step"],
            r["actor"],
            r["kind"],
            r["content"],
            r["tool"],
            json.loads(r["tool_args"]) if r["tool_args"] else None,
            tuple(r["media"] or ()),
            _cost(r),
        )
        for r in rows
    ]


def _cost(row: dict[str, Any]) -> StepCost | None:
    """What producing a recorded step cost (None for a scripted policy's free step): a
    warm start's replayed prefix keeps it, so its cost columns read as the recording's."""
    cost = StepCost(row.get("tokens_in") or 0, row.get("tokens_out") or 0,
                    row.get("cost_usd") or 0.0, row.get("latency_s") or 0.0)  # fmt: skip
    return cost if cost != StepCost() else None
