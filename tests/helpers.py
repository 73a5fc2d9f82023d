"""Build small in-memory stage inputs by running the real stages on a tiny config."""

from __future__ import annotations

import copy
import json
from typing import Any

import polars as pl

from whowhen.benchmarks.doc_qa.actions import BACK, READ
from whowhen.continuation import continue_injections
from whowhen.dataset.build import build_dataset
from whowhen.injection.plan import plan_injections
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


def mock_model_config(
    url: str,
    base: dict[str, Any] | None = None,
    *,
    benchmarks: dict[str, Any] | None = None,
    systems: list[str] | None = None,
    agents: dict[str, Any] | None = None,
    feedback: dict[str, Any] | None = None,
    protocol: str = "all_at_once",
    llm: dict[str, Any] | None = None,
    native_tools: bool | None = None,
) -> dict[str, Any]:
    """A copy of `base` (TINY by default) whose model `mock` is the HTTP stand-in at `url`
    and whose one LLM attributor is `mock_<protocol>` on it. Each section given replaces
    the base's (`llm` is merged into it, progress bars off). A team the model plays
    (`agents`) errs only where the model does: no scripted slips."""
    config = copy.deepcopy(TINY if base is None else base)
    for key, value in (("benchmarks", benchmarks), ("systems", systems), ("feedback", feedback)):
        if value is not None:
            config[key] = copy.deepcopy(value)
    if agents is not None:
        config["agents"] = copy.deepcopy(agents)
        config["rollouts"]["slip_rate"] = 0.0
    model = {**config["models"].get("mock", {"id": "openai-compatible/mock"}), "base_url": url}
    if native_tools is not None:
        model["native_tools"] = native_tools
    config["models"] = {**config["models"], "mock": model}
    config["attribution"]["llm"] = [
        {"name": f"mock_{protocol}", "model": "mock", "protocol": protocol}
    ]
    config["llm"] = {**config["llm"], "progress": False, **(llm or {})}
    return config


def drifting_arithmetic(monkeypatch: Any) -> None:
    """Make the arithmetic environment non-deterministic: every calculator observation
    gets a counter appended, so a replayed prefix no longer matches its record."""
    import dataclasses
    import itertools

    from whowhen import registry
    from whowhen.benchmarks.arithmetic.env import ArithmeticEnv

    counter = itertools.count()

    class Drifting(ArithmeticEnv):
        def step(self, action):  # type: ignore[no-untyped-def]
            result = super().step(action)
            if result and result[0] == "calculator":
                return "calculator", f"{result[1]} [{next(counter)}]"
            return result

    drifting = dataclasses.replace(registry.BENCHMARKS["arithmetic"], make_env=Drifting)
    monkeypatch.setitem(registry.BENCHMARKS, "arithmetic", drifting)


def slip_failures(system: str, benchmark: str, tasks: list[Any], seed: int) -> int:
    """Run the pair with the slip model always on; no run may crash (a policy error ends
    the episode with end_reason 'error: ...'), every run logs its slips; the failures."""
    from whowhen.assembly import make_system
    from whowhen.operators import random_slip
    from whowhen.registry import get_benchmark
    from whowhen.runtime import run_episode

    failures = 0
    for task in tasks:
        policy = make_system(system, benchmark, slip_rate=1.0, seed=seed, slip=random_slip)
        episode = run_episode(get_benchmark(benchmark).make_env(task), policy, 60)
        assert not episode.end_reason.startswith("error"), episode.end_reason
        assert policy.slips
        failures += not episode.verdict.success
    return failures


def _step(run_id, step, actor, kind, content, tool=None, args=None) -> dict:
    return {
        "run_id": run_id,
        "step": step,
        "actor": actor,
        "kind": kind,
        "content": content,
        "tool": tool,
        "tool_args": json.dumps(args) if args is not None else None,
        "media": [],
    }


def hand_trajectories() -> dict[str, pl.DataFrame]:
    """Two hand-written runs for the LLM protocols. h1: the solver makes up 48 at step 6
    (the stand-in model's only suspect step: a number seen nowhere before); h2: none."""
    calc = "calculator"
    rows = [
        _step("h1", 0, "user", "message", "Add 12 and 30, then multiply by 2."),
        _step("h1", 1, "planner", "message", "Plan: add 12 and 30, then multiply by 2."),
        _step("h1", 2, "solver", "action", "Adding.", calc, {"expression": "12 + 30"}),
        _step("h1", 3, calc, "observation", "42"),
        _step("h1", 4, "solver", "action", "Multiplying 42.", calc, {"expression": "42 * 2"}),
        _step("h1", 5, calc, "observation", "84"),
        _step("h1", 6, "solver", "message", "The answer is 48."),
        _step("h1", 7, "planner", "action", "Submitting.", "final_answer", {"answer": "48"}),
        _step("h2", 0, "user", "message", "What is 5 + 4?"),
        _step("h2", 1, "solver", "action", "Computing.", calc, {"expression": "5 + 4"}),
        _step("h2", 2, calc, "observation", "9"),
        _step("h2", 3, "solver", "action", "Done.", "final_answer", {"answer": "9"}),
    ]
    steps = pl.DataFrame(rows, schema_overrides={"media": pl.List(pl.String)})
    runs = pl.DataFrame(
        {
            "run_id": ["h1", "h2"],
            "question": ["Add 12 and 30, then multiply by 2.", "What is 5 + 4?"],
            "gold_answer": ["84", "9"],
        }
    )
    return {"runs": runs, "steps": steps}


def main_reads(history) -> list[int]:
    """The steps that read a hop's document (not a detour)."""
    return [
        s.step
        for s in history
        if s.tool == "read" and (READ.read(s.content) or BACK.read(s.content))
    ]
