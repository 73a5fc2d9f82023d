"""Shared harness of the step-only coherence checks (`test_coherence_*.py`).

Each benchmark's test file has its own `contradiction` checker, which reads ONE step (its
text, tool and arguments) and says what in it disagrees. The steps it must pass are
collected here, the same way for every benchmark: (a) every agent step of slip-free
reference rollouts, (b) the replacements `plan_injections` plans for the package's modes,
and (c) every package operator applied to every agent step (with its history) under a few
seeds. Results are memoized per session with `functools.cache`, so every argument is
hashable: an operator table is passed as `table(OPERATORS)`, seeds as a tuple. The tests
over those steps are built here too (`*_test`, `*_tests`) and bound to their names in each
test file, with the file's own checker, systems, thresholds and seeds.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Mapping
from functools import cache, partial
from typing import Any

import polars as pl
import pytest

from whowhen.injection.plan import plan_injections, programmatic
from whowhen.registry import runs_code
from whowhen.rollouts import run_rollouts
from whowhen.runtime import Action, Step
from whowhen.runtime.records import steps_from_rows
from whowhen.schema import NON_AGENT_ACTORS
from whowhen.taxonomy import Mode

from .conftest import MAX_STEPS
from .operator_checks import TAXONOMY, rollouts

Checker = Callable[[Action], "str | None"]
Operator = Callable[..., "Action | None"]
Operators = tuple[tuple[str, Operator], ...]
"""A mode -> operator table in hashable form (see `table`)."""
Replacements = tuple[tuple[str, Action], ...]
"""(mode, replacement) pairs."""
Table = Mapping[str, Operator]
Systems = tuple[str, ...]
Test = Callable[..., None]


def table(operators: Table) -> Operators:
    """An operator table as the hashable argument the functions below take."""
    return tuple(operators.items())


def apply(op: Operator, action: Action, rng: random.Random, history: list[Step]) -> Any:
    """Call an operator as the registry does (with the history when it takes one)."""
    if len(inspect.signature(op).parameters) >= 3:
        return op(action, rng, history)
    return op(action, rng)


def agent_actions(steps: pl.DataFrame) -> list[Action]:
    """The agent steps (actions and messages, no user or system input) of a steps table,
    run by run in step order."""
    rows = steps.filter(
        pl.col("kind").is_in(["action", "message"]) & ~pl.col("actor").is_in(NON_AGENT_ACTORS)
    )
    return [s.as_action() for s in steps_from_rows(rows.sort("run_id", "step").to_dicts())]


@cache
def reference_actions(benchmark: str, system: str, n_tasks: int = 30) -> tuple[Action, ...]:
    """Every agent step of slip-free reference rollouts."""
    _, steps, _ = run_rollouts(benchmark, system, {"n_tasks": n_tasks}, 1, 0.0, MAX_STEPS)
    return tuple(agent_actions(steps))


def _package_only(
    operators: dict[str, Operator],
    original: Action,
    mode: Mode,
    context: list[dict[str, Any]],
    rng: random.Random,
) -> Action | None:
    """A plan generator that uses the given table only (no generic or other operator)."""
    return apply(operators[mode.id], original, rng, steps_from_rows(context))


@cache
def planned_replacements(
    benchmark: str,
    system: str,
    operators: Operators,
    *,
    seeds: tuple[int, ...] = (3,),
    per_run: int = 3,
    together: bool = False,
    package_only: bool = False,
    n_tasks: int = 30,
) -> Replacements:
    """(mode, replacement) of the injections planned for the table's modes, as the
    injection stage plans them, on rollouts with slips (so recoveries are there to inject
    into): for each seed, one plan per mode, or one plan of all modes `together`. With
    `package_only` the plan makes its replacements with the table's operators only, else
    with the registry's (generic operators included)."""
    runs, steps = rollouts(benchmark, system, n_tasks)
    modes = [mode for mode, _ in operators]
    groups = [sorted(modes)] if together else [[mode] for mode in modes]
    generator = partial(_package_only, dict(operators)) if package_only else programmatic
    out: list[tuple[str, Action]] = []
    for seed in seeds:
        for group in groups:
            plan = plan_injections(runs, steps, TAXONOMY, seed, per_run, group, generator)
            out += [
                (mode, Action.from_json(a))
                for mode, a in zip(plan["mode"], plan["replacement_action"], strict=True)
            ]
    return tuple(out)


@cache
def direct_replacements(
    benchmark: str,
    system: str,
    operators: Operators,
    skip: Checker | None = None,
    *,
    seeds: tuple[int, ...] = (0, 1, 2),
    successful_only: bool = False,
    n_tasks: int = 30,
) -> Replacements:
    """(mode, replacement) of every operator of the table applied to every agent step of
    the rollouts with slips (of the successful runs only, with `successful_only`), with
    the history before the step, under each seed: every form an operator can produce.
    A step the `skip` checker flags is a slip of the rollouts' slip model, not an
    operator's, and is left out."""
    runs, steps = rollouts(benchmark, system, n_tasks)
    if successful_only:
        steps = steps.filter(pl.col("run_id").is_in(runs.filter(pl.col("success"))["run_id"]))
    out: list[tuple[str, Action]] = []
    for (run_id,), run in steps.sort("step").group_by(["run_id"], maintain_order=True):
        history = steps_from_rows(run.to_dicts())
        for i, step in enumerate(history):
            if not step.is_agent_step:
                continue
            original = step.as_action()
            if skip is not None and skip(original):
                continue
            for mode, op in operators:
                for seed in seeds:
                    rng = random.Random(f"{run_id}:{i}:{mode}:{seed}")
                    new = apply(op, original, rng, history[:i])
                    if new is not None and new != original:
                        out.append((mode, new))
    return tuple(out)


def flagged(contradiction: Checker, replacements: Replacements) -> list[tuple[str, Action, str]]:
    """(mode, replacement, why) of each replacement the checker flags."""
    return [(m, a, why) for m, a in replacements if (why := contradiction(a))]


# --- the tests over them -----------------------------------------------------------------


def sandbox_slow(systems: Systems) -> list[Any]:
    """The systems as test parameters, those whose agents run programs in the sandbox
    marked slow: a rollout there starts a process per program (tens of seconds for a
    benchmark's tasks), so the everyday `-m "not slow"` loop leaves them to the full suite."""
    return [pytest.param(s, marks=pytest.mark.slow) if runs_code(s) else s for s in systems]


def reference_test(
    benchmark: str,
    systems: Systems,
    contradiction: Checker,
    at_least: int = 1,
    *,
    n_tasks: int = 30,
) -> Test:
    """Per system: the reference rollouts have at least `at_least` agent steps and the
    checker flags none of them."""

    @pytest.mark.parametrize("system", sandbox_slow(systems))
    def test(system: str) -> None:
        actions = reference_actions(benchmark, system, n_tasks)
        assert len(actions) >= at_least, (len(actions), at_least)
        bad = [(a, why) for a in actions if (why := contradiction(a))]
        assert not bad, (len(bad), len(actions), bad[:3])

    return test


def replacement_test(
    systems: Systems,
    contradiction: Checker,
    *sources: Callable[[str], Replacements],
    at_least: int = 1,
) -> Test:
    """Per system: every source gives replacements, at least `at_least` in all, and the
    checker flags none of them."""

    @pytest.mark.parametrize("system", sandbox_slow(systems))
    def test(system: str) -> None:
        found = [source(system) for source in sources]
        assert all(found), [len(f) for f in found]
        made = tuple(r for f in found for r in f)
        assert len(made) >= at_least, (len(made), at_least)
        bad = flagged(contradiction, made)
        assert not bad, (len(bad), len(made), bad[:3])

    return test


def planned_test(
    benchmark: str,
    systems: Systems,
    operators: Mapping[str, Operator],
    contradiction: Checker,
) -> Test:
    """Per system: no replacement planned per mode of the table (made by the registry's
    operators, generic ones included) is flagged."""
    ops = table(operators)
    return replacement_test(
        systems, contradiction, lambda system: planned_replacements(benchmark, system, ops)
    )


def direct_test(
    benchmark: str,
    systems: Systems,
    operators: Mapping[str, Operator],
    contradiction: Checker,
) -> Test:
    """Per system: no output of the table's operators on an agent step of the slip
    rollouts is flagged; the steps the checker itself flags there are left out (slips of
    the slip model, not the operators')."""
    ops = table(operators)
    return replacement_test(
        systems,
        contradiction,
        lambda system: direct_replacements(benchmark, system, ops, contradiction),
    )


def swept_test(
    benchmark: str,
    systems: Systems,
    operators: Mapping[str, Operator],
    contradiction: Checker,
) -> Test:
    """Per system: none of the replacements planned per mode with the table's operators
    only, nor of the table's operators' outputs on every agent step, is flagged (and both
    kinds are there)."""
    ops = table(operators)
    return replacement_test(
        systems,
        contradiction,
        lambda system: planned_replacements(benchmark, system, ops, package_only=True),
        lambda system: direct_replacements(benchmark, system, ops),
    )


def modes_test(benchmark: str, systems: Systems, operators: Table) -> Test:
    """Every mode of the table made a replacement on some system's rollouts."""
    ops = table(operators)

    def test() -> None:
        made = {m for system in systems for m, _ in direct_replacements(benchmark, system, ops)}
        assert made == set(operators), made

    return test


def all_modes_test(
    benchmark: str,
    systems: Systems,
    operators: Mapping[str, Operator],
    contradiction: Checker,
) -> Test:
    """Per system: more than 100 replacements, none flagged: those planned for all modes
    together (seeds 3 and 4, eight per run) and every operator's output on every agent
    step of the successful runs."""
    ops = table(operators)
    return replacement_test(
        systems,
        contradiction,
        lambda system: planned_replacements(
            benchmark, system, ops, seeds=(3, 4), per_run=8, together=True
        ),
        lambda system: direct_replacements(
            benchmark, system, ops, seeds=(0,), successful_only=True
        ),
        at_least=101,
    )
