"""The registry: benchmark name -> its `Benchmark` record, (system, benchmark) -> an agent
system, and the role prompts and tools an LLM playing an agent gets.

Why discovery instead of a list: adding a benchmark means adding one package. Every
subpackage of `whowhen.benchmarks` that exports `SPEC` is a built-in benchmark; a
benchmark in a separate distribution registers itself through the entry-point group
`whowhen.benchmarks` (`name = "module"`, the module exporting `SPEC`). A config entry with
a `file` key is a dataset-file benchmark (`benchmarks.dataset_file`) under any name.

Systems: react (ReAct tool calling), code_act (code as action), solver_verifier,
orchestrator (orchestrator + specialist workers + verifier) and pipeline (coder -> tester
-> reviewer) are scripted, and pair with the benchmarks whose package has a policy for
them. `llm_<system>` is the same system played by models (one per role, `agents.roles`),
on the same benchmarks; `llm_react` also on any benchmark that declares its tools. A
framework system (`frameworks.systems`, e.g. `ag2_solver_verifier`) is a real agent
framework playing a built-in system's agents on the same text benchmarks.

Importing the registry also imports `whowhen.standin`, which registers the stand-in model
`scripted/standin` with the model layer: every stage that makes model clients from config
names imports the registry, so the stand-in is known wherever a config can name it, while
`whowhen.models` itself stays free of the stand-in's benchmark-reading responders.
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib.metadata import entry_points
from typing import Any

import whowhen.benchmarks
import whowhen.standin
from whowhen.agents.scripted import Slip
from whowhen.agents.team import SCRIPTED, ModelTeam, TeamLimits
from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.dataset_file import make_benchmark
from whowhen.errors import WhowhenError
from whowhen.frameworks.systems import FRAMEWORK_SYSTEMS
from whowhen.models import make_client
from whowhen.models.client import ClientStats
from whowhen.runtime import AgentSystem
from whowhen.tools import FINAL_ANSWER_TOOL, RUN_PYTHON_TOOL

ENTRY_POINT_GROUP = "whowhen.benchmarks"

BENCHMARKS: dict[str, Benchmark] = {}
"""name -> record of every discovered benchmark (filled by `discover`)."""

SYSTEMS: dict[str, dict[str, type]] = {}
"""system -> benchmark -> scripted reference policy class, from the benchmarks' records."""

LLM_SYSTEMS = ("llm_react", "llm_code_act", "llm_solver_verifier", "llm_orchestrator",
               "llm_pipeline")  # fmt: skip
"""Systems whose agents are played by models: `llm_<system>` plays `<system>`."""

MODEL_SYSTEMS = (*LLM_SYSTEMS, *FRAMEWORK_SYSTEMS)
"""Every system whose agents are models: the LLM systems and the real frameworks'
(`frameworks.systems`). None has a scripted policy to replay, and their code is untrusted."""


def base_system(name: str) -> str:
    """The built-in system an LLM or framework system plays (`llm_solver_verifier` ->
    `solver_verifier`, `ag2_solver_verifier` -> `solver_verifier`)."""
    if name in FRAMEWORK_SYSTEMS:
        return FRAMEWORK_SYSTEMS[name].plays
    return name.removeprefix("llm_") if name in LLM_SYSTEMS else name


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
    """Build BENCHMARKS and SYSTEMS in place from the packages and entry points.

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
    return BENCHMARKS


discover()
whowhen.standin.responders.know(BENCHMARKS, SYSTEMS, lambda s, b: pair_tools(s, b))


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


def has_policy(system: str, benchmark: str) -> bool:
    """Whether the pair makes sense (the config matrix runs only these)."""
    if system == "llm_react":
        return True
    if system in FRAMEWORK_SYSTEMS:  # frameworks are given the task as text, for now
        spec = BENCHMARKS.get(benchmark)
        if spec is None or spec.modality != "text":
            return False
    return benchmark in SYSTEMS.get(base_system(system), {})


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
        return _model_team(name, benchmark, client, seed, bench_cfg)
    if name in FRAMEWORK_SYSTEMS:
        raise WhowhenError(
            f"system {name!r} is run by its framework (frameworks.stage), not as an agent loop",
            field="systems",
        )
    if name not in SYSTEMS:
        known = ", ".join([*SYSTEMS, *MODEL_SYSTEMS])
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
    """The role prompt the benchmark gives an LLM playing `agent` of `system` (the
    system's first agent by default), or None if it has none."""
    spec = BENCHMARKS.get(benchmark)
    prompts = spec.prompts.get(system, {}) if spec is not None else {}
    if agent is None:
        return next(iter(prompts.values()), None)
    return prompts.get(agent)


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
    cls = SYSTEMS.get(system, {}).get(benchmark)
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
        example=_example(system, benchmark),
    )


def _example(system: str, benchmark: str) -> tuple[Any, ...]:
    """The benchmark's worked example run for `system`, if it has one."""
    spec = BENCHMARKS.get(benchmark)
    return tuple(spec.examples.get(system, ())) if spec is not None else ()


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


def pair_tools(
    system: str, benchmark: str, bench_cfg: dict[str, Any] | None = None
) -> tuple[dict[str, Any], ...]:
    """The tool schemas an LLM playing `system` on `benchmark` is offered: code_act writes
    Python (run_python, final_answer); the others use the benchmark's own tools."""
    if base_system(system) == "code_act":
        return (RUN_PYTHON_TOOL, FINAL_ANSWER_TOOL)
    return get_benchmark(benchmark, bench_cfg).tools


def agent_client(
    agents: dict[str, Any] | None, llm: dict[str, Any] | None, models: dict[str, Any] | None
) -> AgentModels | None:
    """The models for LLM-played systems (`agents` config section), or None when no
    model is named."""
    agents = agents or {}
    names = {agents.get("model"), *(agents.get("roles") or {}).values()} - {None, SCRIPTED}
    if not names:
        return None
    settings = {**(llm or {}), "progress": False}
    clients = {n: make_client(n, settings, models) for n in sorted(names)}
    default = clients.get(agents.get("model"))
    roles = {
        a: SCRIPTED if m == SCRIPTED else clients[m] for a, m in (agents.get("roles") or {}).items()
    }
    limits = TeamLimits(
        **{k: agents[k] for k in ("context_chars", "stall_turns", "repeat_turns", "max_tokens")
           if k in agents},
        json_turns=agents.get("turn_format") == "json",
    )  # fmt: skip
    return AgentModels(
        default,
        roles,
        limits,
        float(agents.get("temperature", 0.0)),
        int((llm or {}).get("max_concurrency", 1)),
    )
