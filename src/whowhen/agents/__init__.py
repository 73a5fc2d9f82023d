"""Agent-system registry: (system name, benchmark) -> a policy object."""

from __future__ import annotations

from typing import Any

from whowhen.agents.arithmetic import ReactSystem, SolverVerifierSystem
from whowhen.agents.doc_qa import DocReactSystem
from whowhen.agents.scripted import Slip
from whowhen.agents.table_qa import TableReactSystem, TableSolverVerifierSystem
from whowhen.errors import WhowhenError
from whowhen.runtime import AgentSystem

SYSTEMS: dict[str, dict[str, type]] = {
    "react": {"arithmetic": ReactSystem, "table_qa": TableReactSystem, "doc_qa": DocReactSystem},
    "solver_verifier": {"arithmetic": SolverVerifierSystem, "table_qa": TableSolverVerifierSystem},
}
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
) -> AgentSystem:
    """The scripted reference policy of `name` for `benchmark` (slip_rate 0 = never errs),
    or, for an LLM system, the model behind `client` playing the agent."""
    if name in LLM_SYSTEMS:
        from whowhen.agents.llm_policy import LLMReactSystem
        from whowhen.benchmarks import get_benchmark

        if client is None:
            raise WhowhenError(
                f"system {name!r} needs a model: set agents.model in the config",
                field="agents.model",
            )
        return LLMReactSystem(client, get_benchmark(benchmark).tools, seed=seed)
    if name not in SYSTEMS:
        known = ", ".join([*SYSTEMS, *LLM_SYSTEMS])
        raise WhowhenError(f"unknown system {name!r}; known: {known}", field="systems")
    if benchmark not in SYSTEMS[name]:
        raise WhowhenError(
            f"system {name!r} has no policy for benchmark {benchmark!r}", field="systems"
        )
    return SYSTEMS[name][benchmark](slip_rate=slip_rate, seed=seed, slip=slip)


def agent_client(
    agents: dict[str, Any] | None, llm: dict[str, Any] | None, models: dict[str, Any] | None
) -> Any:
    """The model client for LLM-played systems, or None when `agents.model` is unset."""
    if not agents or not agents.get("model"):
        return None
    from whowhen.models import make_client

    return make_client(agents["model"], {**(llm or {}), "progress": False}, models)
