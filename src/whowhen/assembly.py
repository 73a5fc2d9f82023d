"""Assembling a run: the agent system a stage runs for a (system, benchmark) pair, and
the model clients that play model-played systems' roles.

Why apart from the registry: the registry only registers and looks up; this module builds
(policies, model teams, clients), so a stage calls it once with its config sections and
the config goes down the layers, never back up to the registry.
"""

from __future__ import annotations

from typing import Any

from whowhen.agents.scripted import Slip
from whowhen.agents.team import SCRIPTED, ModelTeam, TeamLimits
from whowhen.defaults import filled
from whowhen.errors import WhowhenError
from whowhen.models import make_client
from whowhen.models.client import ClientStats
from whowhen.registry import SYSTEM_KINDS, base_system, example, pair_tools, policies, role_prompt
from whowhen.runtime import AgentSystem

__all__ = ["SCRIPTED", "AgentModels", "TeamLimits", "agent_client", "make_system"]


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
    kind = SYSTEM_KINDS.get(name)
    if kind.played_by == "model":
        return _model_team(name, benchmark, client, seed, bench_cfg)
    if kind.played_by == "framework":
        raise WhowhenError(
            f"system {name!r} is run by its framework (frameworks.stage), not as an agent loop",
            field="systems",
        )
    if benchmark not in kind.policies:
        raise WhowhenError(
            f"system {name!r} has no policy for benchmark {benchmark!r}", field="systems"
        )
    return kind.policies[benchmark](
        slip_rate=slip_rate,
        seed=seed,
        slip=slip,
        earlier_seeds=earlier_seeds,
        persistence=persistence,
    )


def _model_team(
    name: str, benchmark: str, client: Any, seed: int, bench_cfg: dict[str, Any] | None
) -> AgentSystem:
    """`name` (an LLM system) on `benchmark`, its roles played by `client`'s models."""
    if client is None:
        raise WhowhenError(
            f"system {name!r} needs a model: set agents.model in the config", field="agents.model"
        )
    models = client if isinstance(client, AgentModels) else AgentModels(client)
    system = base_system(name)
    cls = policies(name).get(benchmark)
    if cls is None and system != "react":
        raise WhowhenError(
            f"system {name!r} has no policy for benchmark {benchmark!r}", field="systems"
        )
    agents = cls.agents if cls is not None else ("assistant",)
    return ModelTeam(
        name,
        system,
        agents,
        models.for_agents(agents, name),
        pair_tools(system, benchmark, bench_cfg),
        {a: role_prompt(system, benchmark, a) for a in agents},
        seed=seed,
        reference=cls(seed=seed) if cls is not None else None,
        limits=models.limits,
        temperature=models.temperature,
        example=example(system, benchmark),
    )


class AgentModels:
    """The models that play LLM systems' roles: `default` for every role, `roles` per
    agent (a client, or `SCRIPTED` for the reference policy)."""

    def __init__(
        self,
        default: Any,
        roles: dict[str, Any] | None = None,
        limits: TeamLimits | None = None,
        temperature: float = 0.0,
        concurrency: int = 1,
    ) -> None:
        self.default, self.roles = default, dict(roles or {})
        self.concurrency = max(1, concurrency)  # runs played at once (llm.max_concurrency)
        self.limits, self.temperature = limits or TeamLimits(), temperature

    @property
    def stats(self) -> ClientStats:
        """The model calls of every client, summed."""
        clients = {id(c): c for c in (self.default, *self.roles.values())}
        total = ClientStats()
        for c in clients.values():
            if c is None or c == SCRIPTED:
                continue
            for key in ("calls", "cache_hits", "retries", "failures", "spent_usd", "shared"):
                setattr(total, key, getattr(total, key) + getattr(c.stats, key))
            for err, n in c.stats.errors.items():
                total.errors[err] = total.errors.get(err, 0) + n
        return total

    def for_agents(self, agents: tuple[str, ...], system: str) -> dict[str, Any]:
        clients = {a: self.roles.get(a, self.default) for a in agents}
        missing = [a for a, c in clients.items() if c is None]
        if missing:
            raise WhowhenError(
                f"system {system!r}: no model plays {', '.join(missing)}; set agents.model "
                "or agents.roles",
                field="agents.model",
            )
        return clients


def agent_client(
    agents: dict[str, Any] | None, llm: dict[str, Any] | None, models: dict[str, Any] | None
) -> AgentModels | None:
    """The models for LLM-played systems (`agents` config section), or None when no
    model is named. Keys the sections leave out come from the config schema's defaults."""
    agents, llm = filled("agents", agents), filled("llm", llm)
    names = {agents["model"], *agents["roles"].values()} - {None, SCRIPTED}
    if not names:
        return None
    settings = {**llm, "progress": False}
    clients = {n: make_client(n, settings, models) for n in sorted(names)}
    default = clients.get(agents["model"])
    roles = {a: SCRIPTED if m == SCRIPTED else clients[m] for a, m in agents["roles"].items()}
    limits = TeamLimits(
        **{k: agents[k] for k in ("context_chars", "stall_turns", "repeat_turns", "max_tokens")},
        json_turns=agents["turn_format"] == "json",
    )
    return AgentModels(
        default, roles, limits, float(agents["temperature"]), int(llm["max_concurrency"])
    )
