"""Build small in-memory stage inputs by running the real stages on a tiny config."""

from __future__ import annotations

from typing import Any

import polars as pl

from whowhen.continuation import build_dataset, continue_injections
from whowhen.injection import plan_injections
from whowhen.rollouts import run_rollouts
from whowhen.taxonomy import load_taxonomy

from .conftest import ROOT, TINY


def pipeline(
    system: str = "solver_verifier",
    cfg: dict[str, Any] = TINY,
) -> dict[str, pl.DataFrame]:
    bench = cfg["benchmarks"]["arithmetic"]
    runs, steps, _ = run_rollouts("arithmetic", system, bench, cfg["seed"], 0.0, 80)
    taxonomy = load_taxonomy(ROOT / "config" / "taxonomy.yaml")
    inj = plan_injections(
        runs, steps, taxonomy, cfg["injection"]["seed"], cfg["injection"]["per_run"]
    )
    parts = continue_injections(inj, runs, steps, bench, cfg["seed"], 80)
    data = build_dataset([parts], 3, 0.5)
    return {
        "rollout_runs": runs,
        "rollout_steps": steps,
        "injections": inj,
        **{f"cont_{k}": v for k, v in parts.items()},
        **data,
    }


def drifting_arithmetic(monkeypatch: Any) -> None:
    """Make the arithmetic environment non-deterministic: every calculator observation
    gets a counter appended, so a replayed prefix no longer matches its record."""
    import dataclasses
    import itertools

    from whowhen import benchmarks
    from whowhen.benchmarks.arithmetic import ArithmeticEnv

    counter = itertools.count()

    class Drifting(ArithmeticEnv):
        def step(self, action):  # type: ignore[no-untyped-def]
            result = super().step(action)
            if result and result[0] == "calculator":
                return "calculator", f"{result[1]} [{next(counter)}]"
            return result

    drifting = dataclasses.replace(benchmarks.BENCHMARKS["arithmetic"], make_env=Drifting)
    monkeypatch.setitem(benchmarks.BENCHMARKS, "arithmetic", drifting)


def slip_failures(system: str, benchmark: str, tasks: list[Any], seed: int) -> int:
    """Run the pair with the slip model always on; no run may crash (a policy error ends
    the episode with end_reason 'error: ...'), every run logs its slips; the failures."""
    from whowhen.agents import make_system
    from whowhen.benchmarks import get_benchmark
    from whowhen.injection import random_slip
    from whowhen.runtime import run_episode

    failures = 0
    for task in tasks:
        policy = make_system(system, benchmark, slip_rate=1.0, seed=seed, slip=random_slip)
        episode = run_episode(get_benchmark(benchmark).make_env(task), policy, 60)
        assert not episode.end_reason.startswith("error"), episode.end_reason
        assert policy.slips
        failures += not episode.verdict.success
    return failures
