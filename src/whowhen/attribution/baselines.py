"""Baseline attributors: they look only at the trajectory's shape, never its content.

They are the floor every real attributor must beat, and a check on the dataset:
if `last_agent_step` scores well, the injection position is a shortcut.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import polars as pl

from whowhen.schema import NON_AGENT_ACTORS, stable_id

Baseline = Callable[[pl.DataFrame, int], tuple[str, int] | None]
"""(agent steps of one run, seed) -> (agent, step) or None when the run has no agent step."""


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


BASELINES: dict[str, Baseline] = {
    "random": random_step,
    "first_agent_step": first_agent_step,
    "last_agent_step": last_agent_step,
}
