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
them; `llm_react` is played by a model on any benchmark that declares its tools.

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
from whowhen.agents.llm_policy import LLMReactSystem
from whowhen.agents.scripted import Slip
from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.dataset_file import make_benchmark
from whowhen.errors import WhowhenError
from whowhen.models import make_client
from whowhen.runtime import AgentSystem
from whowhen.tools import FINAL_ANSWER_TOOL, RUN_PYTHON_TOOL

ENTRY_POINT_GROUP = "whowhen.benchmarks"

BENCHMARKS: dict[str, Benchmark] = {}
"""name -> record of every discovered benchmark (filled by `discover`)."""

SYSTEMS: dict[str, dict[str, type]] = {}
"""system -> benchmark -> scripted reference policy class, from the benchmarks' records."""

LLM_SYSTEMS = ("llm_react",)
"""Systems whose agents are played by a model (any benchmark that declares its tools)."""


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

    Runs once at import. The operator registry (`injection.operators`) is built from it
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
    """The role prompt the benchmark gives an LLM playing `agent` of `system` (the
    system's first agent by default), or None if it has none."""
    spec = BENCHMARKS.get(benchmark)
    prompts = spec.prompts.get(system, {}) if spec is not None else {}
    if agent is None:
        return next(iter(prompts.values()), None)
    return prompts.get(agent)


def pair_tools(system: str, benchmark: str) -> tuple[dict[str, Any], ...]:
    """The tool schemas an LLM playing `system` on `benchmark` is offered: code_act writes
    Python (run_python, final_answer); the others use the benchmark's own tools."""
    if system == "code_act":
        return (RUN_PYTHON_TOOL, FINAL_ANSWER_TOOL)
    return get_benchmark(benchmark).tools


def agent_client(
    agents: dict[str, Any] | None, llm: dict[str, Any] | None, models: dict[str, Any] | None
) -> Any:
    """The model client for LLM-played systems, or None when `agents.model` is unset."""
    if not agents or not agents.get("model"):
        return None
    return make_client(agents["model"], {**(llm or {}), "progress": False}, models)
