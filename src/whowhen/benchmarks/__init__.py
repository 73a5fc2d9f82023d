"""Benchmark registry: a name gives its tasks (from config and a seed) and its environment."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from whowhen.benchmarks import arithmetic, doc_qa, table_qa
from whowhen.errors import WhowhenError
from whowhen.runtime import Environment


@dataclass(frozen=True)
class Benchmark:
    name: str
    modality: str
    category: str
    make_tasks: Callable[[dict[str, Any], int], list[Any]]
    make_env: Callable[[Any], Environment]
    tools: tuple[dict[str, Any], ...] = ()


def _arithmetic_tasks(cfg: dict[str, Any], seed: int) -> list[arithmetic.Task]:
    return arithmetic.generate_tasks(
        cfg["n_tasks"], seed, cfg.get("min_ops", 3), cfg.get("max_ops", 5)
    )


BENCHMARKS: dict[str, Benchmark] = {
    "arithmetic": Benchmark(
        "arithmetic",
        arithmetic.MODALITY,
        arithmetic.CATEGORY,
        _arithmetic_tasks,
        arithmetic.ArithmeticEnv,
        arithmetic.TOOL_SPECS,
    ),
    "table_qa": Benchmark(
        "table_qa",
        table_qa.MODALITY,
        table_qa.CATEGORY,
        lambda cfg, seed: table_qa.generate_tasks(cfg["n_tasks"], seed),
        table_qa.TableQAEnv,
        table_qa.TOOL_SPECS,
    ),
    "doc_qa": Benchmark(
        "doc_qa",
        doc_qa.MODALITY,
        doc_qa.CATEGORY,
        lambda cfg, seed: doc_qa.generate_tasks(cfg["n_tasks"], seed),
        doc_qa.DocQAEnv,
        doc_qa.TOOL_SPECS,
    ),
}


def get_benchmark(name: str) -> Benchmark:
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise WhowhenError(
            f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}", field="benchmarks"
        ) from None
