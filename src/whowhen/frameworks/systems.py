"""The framework systems a config can name: system -> the adapter that runs it, each
registered with the system registry (`whowhen.registry.SYSTEM_KINDS`, which resolves this
module on its first lookup).

Kept apart from the adapters so the registry and config validation can name them
without importing a framework: an adapter module is imported only when a shard runs it,
and a missing optional extra is reported by name, with the command that installs it.
A framework system from outside the package registers a `SystemKind` with
`played_by="framework"` and its `FrameworkSystem` (entry-point group `whowhen.systems`).
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import Any

from whowhen.errors import WhowhenError
from whowhen.registry import CODE_SYSTEMS, SYSTEM_KINDS, SYSTEMS, SystemKind


@dataclass(frozen=True)
class FrameworkSystem:
    """One `system` of the config matrix that a real framework runs."""

    plays: str  # the built-in system whose agents, prompts and operators it takes
    agents: tuple[str, ...]
    extra: str  # the optional dependency group in pyproject.toml
    package: str  # the framework's import name (present when the extra is installed)
    module: str  # the adapter's module and class, imported on first use
    cls: str
    args: tuple[Any, ...] = ()
    benchmarks: tuple[str, ...] = ()  # the benchmarks it pairs with (all of the played
    # system's, if empty): where its agents are fixed by one benchmark's team
    env: str = ""  # its own environment (`frameworks.envs`), where it conflicts with the
    # core install: then `extra` is the framework's distribution, pinned in the lock file


_ADAPTERS = "whowhen.frameworks"
FRAMEWORK_SYSTEMS: dict[str, FrameworkSystem] = {
    "smolagents_react": FrameworkSystem(
        "react", ("assistant",), "smolagents", "smolagents",
        f"{_ADAPTERS}.smolagents_adapter", "SmolagentsToolCalling",
    ),
    "smolagents_code_act": FrameworkSystem(
        "code_act", ("assistant",), "smolagents", "smolagents",
        f"{_ADAPTERS}.smolagents_code", "SmolagentsCode",
    ),
    "ag2_solver_verifier": FrameworkSystem(
        "solver_verifier", ("solver", "verifier"), "ag2", "autogen",
        f"{_ADAPTERS}.ag2_adapter", "AG2SolverVerifier",
    ),
    "ag2_expert_chat": FrameworkSystem(
        "expert_chat", ("Arithmetic_Expert", "Python_Expert", "Verification_Expert"), "ag2",
        "autogen", f"{_ADAPTERS}.ag2_adapter", "AG2ExpertChat", ("arithmetic",),
        ("arithmetic",),
    ),
    "langgraph_react": FrameworkSystem(
        "react", ("assistant",), "langgraph", "langgraph",
        f"{_ADAPTERS}.langgraph_adapter", "LangGraphTeam", ("react", ("assistant",)),
    ),
    "langgraph_solver_verifier": FrameworkSystem(
        "solver_verifier", ("solver", "verifier"), "langgraph", "langgraph",
        f"{_ADAPTERS}.langgraph_adapter", "LangGraphTeam",
        ("solver_verifier", ("solver", "verifier")),
    ),
    "magentic_one": FrameworkSystem(
        "ledger", ("Orchestrator", "WebSurfer", "Assistant"), "autogen-agentchat", "",
        f"{_ADAPTERS}.magentic_one_adapter", "MagenticOneTeam", ("web_shop",), ("web_shop",),
        env="magentic_one",
    ),
}  # fmt: skip
"""The built-in framework systems; each plays a built-in system with the same agent names."""

for _name, _spec in FRAMEWORK_SYSTEMS.items():
    _policies = {b: SYSTEMS.get(_spec.plays, {}).get(b) for b in _spec.benchmarks}
    SYSTEM_KINDS.add(
        _name,
        SystemKind(
            _name,
            _spec.plays,
            "framework",
            _spec.plays in CODE_SYSTEMS,
            {b: cls for b, cls in _policies.items() if cls is not None},
            _spec,
        ),
    )


def framework_spec(name: str) -> FrameworkSystem:
    """The framework behind system `name`; an error when a framework does not run it."""
    kind = SYSTEM_KINDS.get(name)
    if kind.played_by != "framework" or kind.framework is None:
        raise WhowhenError(f"{name!r} is not a framework system", field="systems")
    return kind.framework


def missing_extra(name: str) -> str | None:
    """Why framework system `name` cannot run here (its extra is not installed), or None."""
    spec = framework_spec(name)
    if spec.env:
        from whowhen.frameworks import envs

        path = envs.LOCKS / f"{spec.env}.txt"
        return None if path.is_file() else f"system {name!r} needs its lock file {path}"
    if importlib.util.find_spec(spec.package) is not None:
        return None
    return f"system {name!r} needs the {spec.extra!r} extra: pip install -e '.[{spec.extra}]'"


def make_adapter(name: str) -> Any:
    """The adapter object that runs framework system `name`."""
    why = missing_extra(name)
    if why:
        raise WhowhenError(why, field="systems")
    spec = framework_spec(name)
    return getattr(importlib.import_module(spec.module), spec.cls)(*spec.args)


def framework_version(name: str) -> str:
    """`<package> <version>` of the framework that runs `name` (part of a run's policy:
    another framework version is another system)."""
    from importlib.metadata import PackageNotFoundError, version

    spec = framework_spec(name)
    dist = spec.extra
    if spec.env:
        from whowhen.frameworks import envs

        return f"{dist} {envs.pinned(spec.env, dist)}"
    try:
        return f"{dist} {version(dist)}"
    except PackageNotFoundError:
        return dist
