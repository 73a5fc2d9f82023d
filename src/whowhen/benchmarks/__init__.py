"""Benchmark registry: a name gives its tasks (from config and a seed) and its environment.

A built-in benchmark is a module `whowhen.benchmarks.<name>` that exports BENCHMARK,
MODALITY, CATEGORY, TOOL_SPECS, `make_tasks(cfg, seed)` and an `Env` class. A config entry
with a `file` key is a dataset-file benchmark (`dataset_file.py`) under any name.
Modules keep heavy imports (matplotlib, scipy) inside functions, so the registry is cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from whowhen.errors import WhowhenError
from whowhen.runtime import Environment

BUILTIN = (
    "arithmetic",
    "humaneval",
    "table_qa",
    "doc_qa",
    "web_shop",
    "chart_qa",
    "visual_count",
    "event_timing",
)


@dataclass(frozen=True)
class Benchmark:
    name: str
    modality: str
    category: str
    make_tasks: Callable[[dict[str, Any], int], list[Any]]
    make_env: Callable[[Any], Environment]
    tools: tuple[dict[str, Any], ...] = ()


def _from_module(mod: Any) -> Benchmark:
    return Benchmark(
        mod.BENCHMARK, mod.MODALITY, mod.CATEGORY, mod.make_tasks, mod.Env, tuple(mod.TOOL_SPECS)
    )


def builtin_modules(package: str) -> dict[str, ModuleType]:
    """benchmark name -> module `whowhen.<package>.<name>`, for each built-in benchmark that
    has one (the benchmark modules, and the agents modules with their policies/operators)."""
    found = {}
    for name in BUILTIN:
        try:
            found[name] = importlib.import_module(f"whowhen.{package}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"whowhen.{package}.{name}":
                raise
    return found


BENCHMARKS: dict[str, Benchmark] = {
    name: _from_module(mod) for name, mod in builtin_modules("benchmarks").items()
}


def get_benchmark(name: str, cfg: dict[str, Any] | None = None) -> Benchmark:
    """The benchmark `name`; with its config section, a dataset-file benchmark too."""
    if cfg is not None and "file" in cfg:
        from whowhen.benchmarks.dataset_file import make_benchmark

        return make_benchmark(name, cfg)
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise WhowhenError(
            f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)} "
            "(or give a `file` for a dataset-file benchmark)",
            field="benchmarks",
        ) from None
