"""The operator registry: taxonomy mode -> one operator, combined from the generic slips
(`slips`) and every benchmark's own operators (`Benchmark.operators`).

A replacement must read like a real slip: no marker, no changed formatting, the same
template the policy uses. Operators return None when they cannot apply (e.g. a step
with no number to change), and the caller tries another mode. Within a mode the generic
operator is tried first, then the benchmarks' in registry order; the first that changes
the action wins.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Iterable, Mapping, Sequence

from whowhen.benchmarks.base import Benchmark, Operator
from whowhen.natural_slips import natural_slip
from whowhen.registry import BENCHMARKS
from whowhen.runtime import Action, Step
from whowhen.slips import GENERIC


def _takes_history(op: Operator) -> bool:
    return len(inspect.signature(op).parameters) >= 3


def _combined(operators: list[Operator]) -> Operator:
    """One mode's operator: the first of the benchmarks' operators that applies."""
    with_history = [(op, _takes_history(op)) for op in operators]

    def apply(action: Action, rng: random.Random, history: Sequence[Step] = ()) -> Action | None:
        for op, wants in with_history:
            replaced = op(action, rng, history) if wants else op(action, rng)
            if replaced is not None and replaced != action:
                return replaced
        return None

    return apply


def build_operators(
    benchmarks: Iterable[Benchmark], generic: Mapping[str, Operator] = GENERIC
) -> dict[str, Operator]:
    """Mode id -> operator, from the generic operators and each benchmark's table (a table
    value may be one operator or a tuple of them, tried in order)."""
    by_mode: dict[str, list[Operator]] = {mode: [op] for mode, op in generic.items()}
    for spec in benchmarks:
        for mode, ops in spec.operators.items():
            by_mode.setdefault(mode, []).extend(ops if isinstance(ops, tuple) else (ops,))
    return {mode: _combined(ops) for mode, ops in sorted(by_mode.items())}


OPERATORS: dict[str, Operator] = build_operators(BENCHMARKS.values())


def random_slip(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> tuple[str, Action] | None:
    """The slip model of the scripted policies: a random applicable operator, and its mode."""
    names = sorted(OPERATORS)
    rng.shuffle(names)
    for name in names:
        replaced = OPERATORS[name](action, rng, history)
        if replaced is not None and replaced != action:
            return name, replaced
    return None


SLIP_MODELS = {"natural": natural_slip, "operators": random_slip}
"""How scripted agents slip on their own (`rollouts.slips`): the natural slip generator
(`natural_slips`, apart from the injection operators: the default), or a random
injection operator (as before it existed)."""


def slip_model(name: str = "natural") -> Callable[..., tuple[str, Action] | None]:
    """The slip function of `rollouts.slips`."""
    return SLIP_MODELS[name]
