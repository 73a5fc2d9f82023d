"""Baseline attributors: they look only at the trajectory's shape, never its content.

They are the floor every real attributor must beat, and a check on the dataset:
if `last_agent_step` scores well, the injection position is a shortcut. `predict_each` is
what every attributor that answers run by run without a model shares (the shortcut
predictors and the error-signal heuristic too).
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable
from typing import Any

import polars as pl

from whowhen.attribution.kinds import ATTRIBUTORS, Attributor, AttributorContext
from whowhen.schema import NON_AGENT_ACTORS, PREDICTIONS, stable_id, to_arrow

log = logging.getLogger(__name__)

Baseline = Callable[[pl.DataFrame, int], tuple[str, int] | None]
"""(agent steps of one run, seed) -> (agent, step) or None when the run has no agent step."""
Pick = Callable[[pl.DataFrame, pl.DataFrame], tuple[str, int, str | None] | None]
"""(agent steps of one run, all its steps) -> (agent, step, reason), or None: no answer."""


def prediction_row(run_id: str, attributor: str, **fields: Any) -> dict[str, Any]:
    """A PREDICTIONS row for a model-free attributor: no calls, tokens or cost; `fields`
    override the empty answer (no agent, no step, not parsed)."""
    return {
        "run_id": run_id,
        "attributor": attributor,
        "agent": None,
        "step": None,
        "mode": None,
        "reason": None,
        "raw_output": None,
        "parse_ok": False,
        "calls": 0,
        "tokens_in": 0,
        "tokens_out": 0,
        "cost_usd": 0.0,
        "latency_s": 0.0,
    } | fields


def agent_steps(steps: pl.DataFrame) -> pl.DataFrame:
    """Steps that can be decisive: agent actions and messages, never observations or the task."""
    return steps.filter(
        (pl.col("kind") != "observation") & ~pl.col("actor").is_in(NON_AGENT_ACTORS)
    ).sort("run_id", "step")


def _pick(steps: pl.DataFrame, index: int) -> tuple[str, int] | None:
    if steps.height == 0:
        return None
    row = steps.row(index, named=True)
    return row["actor"], row["step"]


def random_step(steps: pl.DataFrame, seed: int) -> tuple[str, int] | None:
    """Uniform over the run's agent steps; seeded per run so it is reproducible."""
    if steps.height == 0:
        return None
    rng = random.Random(stable_id("random", seed, steps["run_id"][0]))
    return _pick(steps, rng.randrange(steps.height))


def first_agent_step(steps: pl.DataFrame, seed: int) -> tuple[str, int] | None:
    return _pick(steps, 0)


def last_agent_step(steps: pl.DataFrame, seed: int) -> tuple[str, int] | None:
    return _pick(steps, -1) if steps.height else None


def predict_each(
    name: str, runs: pl.DataFrame, steps: pl.DataFrame, candidates: pl.DataFrame, pick: Pick
) -> pl.DataFrame:
    """PREDICTIONS of attributor `name`: one row per run in `runs` (sorted by run_id), each
    `pick`ed from the run's `candidates` (`agent_steps(steps)`) and all its steps."""
    by_run = {key[0]: frame for key, frame in candidates.group_by("run_id")}
    all_by_run = {key[0]: frame for key, frame in steps.group_by("run_id")}
    rows = []
    for run_id in sorted(runs["run_id"]):
        found = pick(by_run.get(run_id, candidates.clear()), all_by_run.get(run_id, steps.clear()))
        agent, step, reason = found if found is not None else (None, None, None)
        rows.append(
            prediction_row(
                run_id,
                name,
                agent=agent,
                step=step,
                reason=reason,
                raw_output=json.dumps({"agent": agent, "step": step}),
                parse_ok=found is not None,
            )
        )
    log.info("attribution %s: %d predictions", name, len(rows))
    return pl.from_arrow(to_arrow(rows, PREDICTIONS))


def baseline(name: str, choose: Baseline, seed: int) -> Attributor:
    """Baseline `choose` as an attributor: no reason, the seed fixed."""

    def pick(frame: pl.DataFrame, _: pl.DataFrame) -> tuple[str, int, str | None] | None:
        answer = choose(frame, seed)
        return None if answer is None else (*answer, None)

    return lambda runs, steps: predict_each(name, runs, steps, agent_steps(steps), pick)


_SHAPE_ONLY = {"protocol": "baseline", "family": "none", "section": "shortcuts"}


@ATTRIBUTORS.register("random", **_SHAPE_ONLY)
def _random(ctx: AttributorContext) -> Attributor:
    return baseline("random", random_step, ctx.seed)


@ATTRIBUTORS.register("first_agent_step", **_SHAPE_ONLY)
def _first(ctx: AttributorContext) -> Attributor:
    return baseline("first_agent_step", first_agent_step, ctx.seed)


@ATTRIBUTORS.register("last_agent_step", **_SHAPE_ONLY)
def _last(ctx: AttributorContext) -> Attributor:
    return baseline("last_agent_step", last_agent_step, ctx.seed)
