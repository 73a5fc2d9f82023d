"""The registry of benchmarks and systems: benchmark name -> its `Benchmark` record,
system name -> its `SystemKind`, and what a (system, benchmark) pair offers (role prompts,
tools). It only registers and looks up; assembling a run (model clients, teams, policies)
is `whowhen.assembly`'s job.

Why discovery instead of a list: adding a benchmark means adding one package. Every
subpackage of `whowhen.benchmarks` that exports `SPEC` is a built-in benchmark; a
benchmark in a separate distribution registers itself through the entry-point group
`whowhen.benchmarks` (`name = "module"`, the module exporting `SPEC`). A config entry with
a `file` key is a dataset-file benchmark (`benchmarks.dataset_file`) under any name.

Systems (`SYSTEM_KINDS`, a `whowhen.plugins.Registry`): react (ReAct tool calling),
code_act (code as action), solver_verifier, orchestrator (orchestrator + specialist workers
+ verifier), pipeline (coder -> tester -> reviewer), expert_chat (an AG2-style group chat)
and ledger (a Magentic-One-style ledger orchestrator) are scripted, and pair with the
benchmarks whose package has a policy for them. `llm_<system>` is the same system played
by models (one per role, `agents.roles`), on the same benchmarks; `llm_react` also on any
benchmark that declares its tools. A framework system (`frameworks.systems`, e.g.
`ag2_solver_verifier`) is a real agent framework playing a built-in system's agents on the
same text benchmarks; that module registers them, resolved on the first lookup. A system
from outside the package registers through the entry-point group `whowhen.systems`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Literal

import whowhen.benchmarks
from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.dataset_file import make_benchmark
from whowhen.errors import WhowhenError
from whowhen.plugins import Registry
from whowhen.tools import (
    FINAL_ANSWER_TOOL,
    LEDGER_TERMINAL_TOOL,
    RUN_PYTHON_TOOL,
    TERMINAL_TOOL,
)

ENTRY_POINT_GROUP = "whowhen.benchmarks"

BENCHMARKS: dict[str, Benchmark] = {}
"""name -> record of every discovered benchmark (filled by `discover`)."""

SYSTEMS: dict[str, dict[str, type]] = {}
"""system -> benchmark -> scripted reference policy class, from the benchmarks' records."""

BUILTIN_SYSTEMS = ("react", "code_act", "solver_verifier", "orchestrator", "pipeline")
"""The built-in systems, in the order a listing shows them."""

CODE_SYSTEMS = ("code_act", "pipeline", "expert_chat", "ledger")
"""Built-in systems whose agents write programs that run in the sandbox (a process per
program: their shards take longest, and their code is untrusted when a model writes it)."""

LLM_SYSTEMS = tuple(f"llm_{s}" for s in BUILTIN_SYSTEMS)
"""Systems whose agents are played by models: `llm_<system>` plays `<system>`."""


@dataclass(frozen=True)
class SystemKind:
    """One system a config's `systems:` can name.

    plays: the built-in system whose agents, role prompts and error operators it takes
        (itself, for a built-in scripted system).
    played_by: `script` (a reference policy per benchmark, `policies`), `model` (the
        built-in team loop, each role a model) or `framework` (a real agent framework
        behind the gateway, `framework`: its `frameworks.systems.FrameworkSystem`).
    runs_code: its agents' programs run in the sandbox (scheduling priority; the kernel's
        process cap when a model writes them).
    """

    name: str
    plays: str
    played_by: Literal["script", "model", "framework"]
    runs_code: bool = False
    policies: Mapping[str, type] = field(default_factory=dict)
    framework: Any = None


SYSTEM_KINDS: Registry[SystemKind] = Registry(
    "system",
    "whowhen.systems",
    "systems",
    builtins=("whowhen.registry", "whowhen.frameworks.systems"),
)
"""Every system: the scripted ones and their `llm_` twins (registered by `discover`), the
framework systems (`whowhen.frameworks.systems`) and plug-ins (entry points)."""


def _spec_of(module_name: str) -> Benchmark:
    module = importlib.import_module(module_name)
    spec = getattr(module, "SPEC", None)
    if not isinstance(spec, Benchmark):
        raise WhowhenError(
            f"benchmark module {module_name!r} exports no SPEC (a whowhen Benchmark)",
            field="benchmarks",
        )
    return spec


def _benchmark_modules() -> list[str]:
    """The built-in benchmark packages (sorted by name), then the entry points' modules."""
    builtin = sorted(
        f"{whowhen.benchmarks.__name__}.{info.name}"
        for info in pkgutil.iter_modules(whowhen.benchmarks.__path__)
        if info.ispkg
    )
    plugins = sorted((ep.name, ep.value) for ep in entry_points(group=ENTRY_POINT_GROUP))
    return builtin + [value for _, value in plugins]


def discover() -> dict[str, Benchmark]:
    """Build BENCHMARKS and SYSTEMS in place from the packages and entry points, and
    register the scripted systems (and their `llm_` twins) they have policies for.

    Runs once at import. The operator registry (`operators`) is built from it
    when that module is imported, so a benchmark installed later needs a new process."""
    found: dict[str, Benchmark] = {}
    for module_name in _benchmark_modules():
        spec = _spec_of(module_name)
        if spec.name in found:
            raise WhowhenError(
                f"two benchmarks are named {spec.name!r} ({module_name})", field="benchmarks"
            )
        found[spec.name] = spec
    BENCHMARKS.clear()
    BENCHMARKS.update(found)
    SYSTEMS.clear()
    for name, spec in found.items():
        for system, cls in spec.policies.items():
            SYSTEMS.setdefault(system, {})[name] = cls
    scripted = [s for s in BUILTIN_SYSTEMS if s in SYSTEMS] + sorted(
        s for s in SYSTEMS if s not in BUILTIN_SYSTEMS
    )
    for system in scripted:
        SYSTEM_KINDS.add(
            system,
            SystemKind(system, system, "script", system in CODE_SYSTEMS, SYSTEMS[system]),
            replace=True,
        )
    for system, llm in zip(BUILTIN_SYSTEMS, LLM_SYSTEMS, strict=True):
        SYSTEM_KINDS.add(
            llm, SystemKind(llm, system, "model", system in CODE_SYSTEMS), replace=True
        )
    return BENCHMARKS


discover()


def get_benchmark(name: str, cfg: dict[str, Any] | None = None) -> Benchmark:
    """The benchmark `name`; with its config section, a dataset-file benchmark too."""
    if cfg is not None and "file" in cfg:
        return make_benchmark(name, cfg)
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise WhowhenError(
            f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)} "
            "(or give a `file` for a dataset-file benchmark)",
            field="benchmarks",
        ) from None


def system_kind(name: str) -> SystemKind:
    """The registered system `name`; an unknown one is one line naming the known ones."""
    return SYSTEM_KINDS.get(name)


def base_system(name: str) -> str:
    """The built-in system an LLM or framework system plays (`llm_solver_verifier` ->
    `solver_verifier`, `ag2_solver_verifier` -> `solver_verifier`); a name no system has
    is returned as it is (imported runs name systems of their own)."""
    return SYSTEM_KINDS.get(name).plays if name in SYSTEM_KINDS else name


def played_by(name: str) -> str | None:
    """`script`, `model` or `framework` for a registered system, None for another name
    (an imported run's system)."""
    return SYSTEM_KINDS.get(name).played_by if name in SYSTEM_KINDS else None


def played_by_model(name: str) -> bool:
    """Whether `name`'s agents are models (an LLM or framework system): none has a
    scripted policy to replay, and the code they write is untrusted."""
    return name in SYSTEM_KINDS and SYSTEM_KINDS.get(name).played_by != "script"


def model_systems() -> tuple[str, ...]:
    """Every system whose agents are models."""
    return tuple(n for n, kind in SYSTEM_KINDS.items() if kind.played_by != "script")


def framework_systems() -> tuple[str, ...]:
    """Every system a real framework runs."""
    return tuple(n for n, kind in SYSTEM_KINDS.items() if kind.played_by == "framework")


def runs_code(name: str) -> bool:
    """Whether system `name`'s agents run programs in the sandbox."""
    return name in SYSTEM_KINDS and SYSTEM_KINDS.get(name).runs_code


LONG_SYSTEMS = ("ledger",)
"""Built-in systems whose runs are several times longer than the others' (a ledger, an
instruction and often a note per worker turn): their shards take long without running
code."""


def slow_shards(name: str) -> bool:
    """Whether system `name`'s shards take longest (it runs code, or its runs are long):
    the scheduler starts them first, so the short ones fill the cores at the end."""
    return runs_code(name) or SYSTEM_KINDS.get(name).plays in LONG_SYSTEMS


def policies(system: str) -> Mapping[str, type]:
    """benchmark -> scripted reference policy of the system `system` plays (empty if none)."""
    kind = SYSTEM_KINDS.get(system) if system in SYSTEM_KINDS else None
    if kind is not None and kind.policies:
        return kind.policies
    return SYSTEMS.get(base_system(system), {})


def has_policy(system: str, benchmark: str) -> bool:
    """Whether the pair makes sense (the config matrix runs only these)."""
    if system not in SYSTEM_KINDS:
        return False
    kind = SYSTEM_KINDS.get(system)
    if kind.played_by == "model" and kind.plays == "react":
        return True
    if kind.played_by == "framework":  # frameworks are given the task as text, for now
        spec = BENCHMARKS.get(benchmark)
        if spec is None or spec.modality != "text":
            return False
    return benchmark in policies(system)


def role_prompt(system: str, benchmark: str, agent: str | None = None) -> str | None:
    """The role prompt the benchmark gives an LLM playing `agent` of `system` (the
    system's first agent by default), or None if it has none."""
    spec = BENCHMARKS.get(benchmark)
    prompts = spec.prompts.get(system, {}) if spec is not None else {}
    if agent is None:
        return next(iter(prompts.values()), None)
    return prompts.get(agent)


def example(system: str, benchmark: str) -> tuple[Any, ...]:
    """The benchmark's worked example run for `system`, if it has one."""
    spec = BENCHMARKS.get(benchmark)
    return tuple(spec.examples.get(system, ())) if spec is not None else ()


def pair_tools(
    system: str, benchmark: str, bench_cfg: dict[str, Any] | None = None
) -> tuple[dict[str, Any], ...]:
    """The tool schemas an LLM playing `system` on `benchmark` is offered: code_act writes
    Python (run_python, final_answer); an expert group chat and a ledger orchestrator run
    their code on their terminal, besides the benchmark's own tools; the others use the
    benchmark's tools."""
    if base_system(system) == "code_act":
        return (RUN_PYTHON_TOOL, FINAL_ANSWER_TOOL)
    if base_system(system) == "expert_chat":
        return (TERMINAL_TOOL, *get_benchmark(benchmark, bench_cfg).tools)
    if base_system(system) == "ledger":
        return (LEDGER_TERMINAL_TOOL, *get_benchmark(benchmark, bench_cfg).tools)
    return get_benchmark(benchmark, bench_cfg).tools
