"""Agent-system registry: (system name, benchmark) -> a policy object.

Scripted systems: react (ReAct tool calling), code_act (code as action), solver_verifier,
orchestrator (orchestrator + specialist workers + verifier) and pipeline
(coder -> tester -> reviewer); which benchmarks each pairs with is the union of the
agents modules' POLICIES tables (the config matrix).

Importing this registry also imports `whowhen.standin`, which registers the stand-in
model `scripted/standin` with the model layer: every stage that makes model clients from
config names imports this registry (or, for the taxonomy stage, the stand-in directly),
so the stand-in is known wherever a config can name it, while `whowhen.models` itself
stays free of the stand-in's benchmark-reading responders."""

from __future__ import annotations

import importlib
from typing import Any

import whowhen.standin  # noqa: F401  registers scripted/standin (see the docstring)
from whowhen.agents.scripted import Slip
from whowhen.benchmarks import builtin_modules
from whowhen.errors import WhowhenError
from whowhen.runtime import AgentSystem


def _policies() -> dict[str, dict[str, type]]:
    """system -> benchmark -> scripted policy, from each `whowhen.agents.<benchmark>`'s
    POLICIES table (a benchmark without an agents module has no scripted policy)."""
    table: dict[str, dict[str, type]] = {}
    for bench, mod in builtin_modules("agents").items():
        for system, cls in mod.POLICIES.items():
            table.setdefault(system, {})[bench] = cls
    return table


SYSTEMS: dict[str, dict[str, type]] = _policies()
LLM_SYSTEMS = ("llm_react",)
"""Systems whose agents are played by a model (any benchmark that declares its tools)."""


def has_policy(system: str, benchmark: str) -> bool:
    """Whether the pair makes sense (the config matrix runs only these)."""
    return system in LLM_SYSTEMS or benchmark in SYSTEMS.get(system, {})


def make_system(
    name: str,
    benchmark: str,
    slip_rate: float = 0.0,
    seed: int = 0,
    slip: Slip | None = None,
    client: Any = None,
    bench_cfg: dict[str, Any] | None = None,
    earlier_seeds: tuple[int, ...] = (),
    persistence: float = 0.0,
) -> AgentSystem:
    """The scripted reference policy of `name` for `benchmark` (slip_rate 0 = never errs),
    or, for an LLM system, the model behind `client` playing the agent. A retry of a task
    passes the seeds of its earlier attempts and how likely their slips recur (`Slipper`)."""
    if name in LLM_SYSTEMS:
        from whowhen.agents.llm_policy import LLMReactSystem
        from whowhen.benchmarks import get_benchmark

        if client is None:
            raise WhowhenError(
                f"system {name!r} needs a model: set agents.model in the config",
                field="agents.model",
            )
        bench = get_benchmark(benchmark, bench_cfg)
        return LLMReactSystem(
            client, bench.tools, seed=seed, prompt=role_prompt("react", benchmark)
        )
    if name not in SYSTEMS:
        known = ", ".join([*SYSTEMS, *LLM_SYSTEMS])
        raise WhowhenError(f"unknown system {name!r}; known: {known}", field="systems")
    if benchmark not in SYSTEMS[name]:
        raise WhowhenError(
            f"system {name!r} has no policy for benchmark {benchmark!r}", field="systems"
        )
    return SYSTEMS[name][benchmark](
        slip_rate=slip_rate,
        seed=seed,
        slip=slip,
        earlier_seeds=earlier_seeds,
        persistence=persistence,
    )


def role_prompt(system: str, benchmark: str, agent: str | None = None) -> str | None:
    """The role prompt the benchmark's agents module gives an LLM playing `agent` of
    `system` (the system's first agent by default), or None if it has none."""
    try:
        mod = importlib.import_module(f"whowhen.agents.{benchmark}")
    except ModuleNotFoundError:
        return None
    prompts = getattr(mod, "PROMPTS", {}).get(system, {})
    if agent is None:
        return next(iter(prompts.values()), None)
    return prompts.get(agent)


def pair_tools(system: str, benchmark: str) -> tuple[dict[str, Any], ...]:
    """The tool schemas an LLM playing `system` on `benchmark` is offered: code_act writes
    Python (run_python, final_answer); the others use the benchmark's own tools."""
    from whowhen.benchmarks import get_benchmark
    from whowhen.benchmarks.base import FINAL_ANSWER_TOOL, RUN_PYTHON_TOOL

    if system == "code_act":
        return (RUN_PYTHON_TOOL, FINAL_ANSWER_TOOL)
    return get_benchmark(benchmark).tools


def agent_client(
    agents: dict[str, Any] | None, llm: dict[str, Any] | None, models: dict[str, Any] | None
) -> Any:
    """The model client for LLM-played systems, or None when `agents.model` is unset."""
    if not agents or not agents.get("model"):
        return None
    from whowhen.models import make_client

    return make_client(agents["model"], {**(llm or {}), "progress": False}, models)
