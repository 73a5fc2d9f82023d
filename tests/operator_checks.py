"""Shared check for injection operators: for one (benchmark, system, mode), the mode's
operator applies to some agent step of successful rollouts, every replacement is valid for
the environment (a tool it has, arguments its schema allows), and at least one injection
flips the outcome when warm-started."""

from __future__ import annotations

from typing import Any

import polars as pl

from whowhen.continuation import continue_injections
from whowhen.injection.plan import plan_injections
from whowhen.registry import get_benchmark, pair_tools
from whowhen.rollouts import run_rollouts
from whowhen.runtime import Action
from whowhen.taxonomy import load_taxonomy

from .conftest import MAX_STEPS, ROOT
from .workdir import shared_tables

TAXONOMY = load_taxonomy(ROOT / "config" / "taxonomy.yaml")
_ROLLOUTS: dict[tuple[str, str, int, int, float], tuple[pl.DataFrame, pl.DataFrame]] = {}


def rollouts(
    benchmark: str, system: str, n_tasks: int = 30, seed: int = 1, slip_rate: float = 0.1
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Rollouts with the slip model on (so some successful runs hold a recovery, which is
    where modes like a false approval can apply); built once per test run (the operator
    coverage and the coherence checks of a pair share them, in whichever worker) and
    memoized per process."""
    key = (benchmark, system, n_tasks, seed, slip_rate)
    if key not in _ROLLOUTS:

        def build() -> dict[str, pl.DataFrame]:
            runs, steps, _ = run_rollouts(
                benchmark, system, {"n_tasks": n_tasks}, seed, slip_rate, MAX_STEPS
            )
            return {"runs": runs, "steps": steps}

        tables = shared_tables("rollouts-" + "-".join(map(str, key)), build)
        _ROLLOUTS[key] = (tables["runs"], tables["steps"])
    return _ROLLOUTS[key]


def valid_for_env(action: Action, benchmark: str, system: str) -> bool:
    """A replacement the environment accepts: a message, or a tool it offers called with
    the arguments its schema requires and allows."""
    if action.tool is None:
        return True
    tools = {
        t["name"]: t for t in (*pair_tools(system, benchmark), *get_benchmark(benchmark).tools)
    }
    if action.tool == "run_python" and system == "code_act":
        return set(action.tool_args or {}) == {"code"}
    spec = tools.get(action.tool)
    if spec is None:
        return False
    params = spec["parameters"]
    args = action.tool_args or {}
    allowed = set(params.get("properties", {}))
    return set(params.get("required", [])) <= set(args) and set(args) <= allowed


def check_mode(
    benchmark: str, system: str, mode: str, n_tasks: int = 30, seed: int = 1
) -> dict[str, Any]:
    """Plan injections of `mode` only, check them and warm-start them; the counts."""
    runs, steps = rollouts(benchmark, system, n_tasks, seed)
    plan = plan_injections(runs, steps, TAXONOMY, 3, 3, [mode])
    invalid = [
        a
        for a in map(Action.from_json, plan["replacement_action"])
        if not valid_for_env(a, benchmark, system)
    ]
    flipped = 0
    if plan.height:
        out = continue_injections(plan, runs, steps, {"n_tasks": n_tasks}, seed, MAX_STEPS)
        flipped = int((out["continuations"]["status"] == "flipped").sum())
    return {"injections": plan.height, "invalid": invalid, "flipped": flipped}
