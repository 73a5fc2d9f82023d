"""What every benchmark shares: its registry record (`Benchmark`), and the environment
base class (`done`, dispatch of tool calls to the environment's own tools plus
`final_answer`, `run_python` and its team forms `Computer_terminal` and
`ComputerTerminal`, and scoring with the benchmark's rule).

A benchmark package `whowhen.benchmarks.<name>` exports `SPEC: Benchmark`; the registry
(`whowhen.registry`) finds the packages, so nothing else lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from whowhen.runtime import Action, Environment, Verdict
from whowhen.tools import (
    LEDGER_TERMINAL,
    TERMINAL,
    computer_terminal,
    ledger_terminal,
    run_python,
)

Observation = str | tuple[str, tuple[str, ...]]
"""A tool's result: its text, or (text, media references) when it shows images."""
Tool = Callable[[dict[str, Any]], Observation]
Operator = Callable[..., Action | None]
"""(action, rng[, history]) -> a replacement, or None when the operator does not apply.
`history` is the visible history before the action (a sequence of Steps): operators that
need context (the last observation, a proposed answer) take it as a third argument."""


def covers(*systems: str) -> Callable[[Operator], Operator]:
    """Mark an operator as one that must change outcomes on `systems` (its mode is
    meaningful for their action types); tests/test_operator_coverage.py holds it to that."""

    def mark(op: Operator) -> Operator:
        op.covers = systems  # type: ignore[attr-defined]
        return op

    return mark


def coverage_of(
    operators: Mapping[str, Operator | tuple[Operator, ...]],
) -> dict[str, tuple[str, ...]]:
    """Mode -> the systems its operators are marked to cover (`covers`), in order."""
    out: dict[str, tuple[str, ...]] = {}
    for mode, ops in operators.items():
        systems = [
            s
            for op in (ops if isinstance(ops, tuple) else (ops,))
            for s in getattr(op, "covers", ())
        ]
        if systems:
            out[mode] = tuple(dict.fromkeys(systems))
    return out


def with_operators(
    base: Mapping[str, Operator | tuple[Operator, ...]],
    extra: Mapping[str, Operator | tuple[Operator, ...]],
) -> dict[str, Operator | tuple[Operator, ...]]:
    """A benchmark's operator table with another system's operators added to their modes
    (a package whose systems are written in several modules, each with its operators)."""
    out: dict[str, Operator | tuple[Operator, ...]] = dict(base)
    for mode, ops in extra.items():
        have = out.get(mode, ())
        more = ops if isinstance(ops, tuple) else (ops,)
        out[mode] = (*(have if isinstance(have, tuple) else (have,)), *more)
    return out


def integer(minimum: int, maximum: int, default: int) -> dict[str, Any]:
    """The JSON Schema of a bounded integer option with its default."""
    return {"type": "integer", "minimum": minimum, "maximum": maximum, "default": default}


def section_schema(max_tasks: int = 100000, **options: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of a benchmark's config section: `n_tasks` (required, at most
    `max_tasks`), `system_tasks` and the benchmark's own options, in order (defaults are
    filled in it)."""
    n_tasks = {"type": "integer", "minimum": 1, "maximum": max_tasks}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["n_tasks"],
        "properties": {"n_tasks": n_tasks, "system_tasks": SYSTEM_TASKS, **options},
    }


SYSTEM_TASKS = {
    "type": "object",
    "propertyNames": {"pattern": "^[a-z][a-z0-9_]*$"},
    "additionalProperties": {"type": "integer", "minimum": 1},
    "default": {},
    "description": "system -> how many of the benchmark's tasks it runs (the first ones): "
    "a costly system on a small budget; every other system runs all n_tasks",
}


def tasks_for(tasks: list[Any], bench_cfg: Mapping[str, Any], system: str) -> list[Any]:
    """The tasks `system` runs: the first `system_tasks[system]` of them, else all."""
    return tasks[: (bench_cfg.get("system_tasks") or {}).get(system, len(tasks))]


DEFAULT_CONFIG_SCHEMA = section_schema()
"""The config section of a benchmark that only needs `n_tasks`."""

ConfigCheck = Callable[[Mapping[str, Any]], list[tuple[str, str]]]
"""A benchmark's checks of its (schema-valid, defaults filled) config section that a schema
cannot express: (key, message) per problem."""


def _no_config_check(cfg: Mapping[str, Any]) -> list[tuple[str, str]]:
    return []


def _no_preflight() -> None:
    return None


@dataclass(frozen=True)
class Benchmark:
    """Everything the pipeline needs of one benchmark, in one record.

    `policies` (system -> scripted reference policy class), `operators` (taxonomy mode ->
    error operator for this benchmark's own tools and messages) and `prompts` (system ->
    agent -> role prompt for an LLM playing it) are empty for a benchmark that has no
    scripted agents (e.g. a dataset file). `coverage` (mode -> the systems on which its
    operators must change outcomes, from their `covers` marks) is what tests hold the
    operators to; `config_schema` is the JSON Schema of its config section, `check_config`
    what a schema cannot check. `examples` (system -> a short worked run, as Steps) is
    shown to a model playing the system, in its turn format: small models follow an
    example far better than a description. `preflight` starts the benchmark's own tool
    environments once (the SQL worker, say) and raises `InfraError` naming what did not
    start: a broken installation stops a shard in seconds, before any run is recorded."""

    name: str
    modality: str
    category: str
    make_tasks: Callable[[dict[str, Any], int], list[Any]]
    make_env: Callable[[Any], Environment]
    tools: tuple[dict[str, Any], ...] = ()
    policies: Mapping[str, type] = field(default_factory=dict)
    operators: Mapping[str, Operator | tuple[Operator, ...]] = field(default_factory=dict)
    prompts: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    coverage: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    config_schema: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_CONFIG_SCHEMA)
    check_config: ConfigCheck = _no_config_check
    examples: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    preflight: Callable[[], None] = _no_preflight

    @classmethod
    def from_modules(cls, tasks: ModuleType, env: ModuleType, *agents: ModuleType) -> Benchmark:
        """The record of a package laid out the usual way: `tasks` (BENCHMARK, MODALITY,
        CATEGORY, make_tasks, and optionally CONFIG_SCHEMA and check_config), `env` (Env,
        TOOL_SPECS, and optionally preflight) and the modules holding POLICIES, OPERATORS,
        PROMPTS and EXAMPLES (each may be absent)."""

        def table(name: str) -> dict[str, Any]:
            return next((getattr(m, name) for m in agents if hasattr(m, name)), {})

        return cls(
            tasks.BENCHMARK,
            tasks.MODALITY,
            tasks.CATEGORY,
            tasks.make_tasks,
            env.Env,
            tuple(env.TOOL_SPECS),
            table("POLICIES"),
            table("OPERATORS"),
            table("PROMPTS"),
            coverage_of(table("OPERATORS")),
            getattr(tasks, "CONFIG_SCHEMA", DEFAULT_CONFIG_SCHEMA),
            getattr(tasks, "check_config", _no_config_check),
            table("EXAMPLES"),
            getattr(env, "preflight", _no_preflight),
        )


class AnswerEnv:
    """Subclasses set benchmark/modality/category, implement `reset()` (calling `_start()`),
    `tools()` (name -> function of the call's arguments) and `score(answer, gold)`."""

    benchmark: str
    modality: str
    category: str

    def __init__(self, task: Any) -> None:
        self.task = task
        self.task_id: str = task.task_id
        self.task_media: tuple[str, ...] = tuple(getattr(task, "media", ()))
        self._answer: str | None = None
        self._done = False

    def _start(self) -> None:
        self._answer, self._done = None, False

    def tools(self) -> dict[str, Tool]:
        raise NotImplementedError

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        raise NotImplementedError

    def step(self, action: Action) -> tuple[str, str] | tuple[str, str, tuple[str, ...]] | None:
        if action.tool is None:  # a message between agents: nothing to execute
            return None
        args = action.tool_args or {}
        if action.tool == "final_answer":
            self._answer, self._done = str(args.get("answer", "")), True
            return None
        shared = {
            "run_python": run_python,
            TERMINAL: computer_terminal,
            LEDGER_TERMINAL: ledger_terminal,
        }
        tool = {**shared, **self.tools()}.get(action.tool)
        if tool is None:
            return action.tool, f"Error: unknown tool {action.tool!r}"
        result = tool(args)
        if isinstance(result, tuple):
            return action.tool, result[0], tuple(result[1])
        return action.tool, result

    @property
    def done(self) -> bool:
        return self._done

    def evaluate(self) -> Verdict:
        ok = self.score(self._answer, str(self.task.answer))
        return Verdict(ok, 1.0 if ok else 0.0, self._answer)
