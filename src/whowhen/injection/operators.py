"""Programmatic error operators: one per taxonomy mode, each turning a correct action into
a plausible, format-valid wrong one.

A replacement must read like a real slip: no marker, no changed formatting, the same
template the policy uses. Operators return None when they cannot apply (e.g. a step
with no number to change), and the caller tries another mode.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Sequence

from whowhen.agents.arithmetic import calc_action, parse_calc
from whowhen.benchmarks.arithmetic import format_number
from whowhen.runtime import Action, Step

Operator = Callable[..., Action | None]
"""(action, rng[, history]) -> a replacement, or None when the operator does not apply.
`history` is the visible history before the action (a sequence of Steps): operators that
need context (the last observation, a proposed answer) take it as a third argument."""

_CONFUSED_OP = {"add": "sub", "sub": "add", "mul": "add", "div": "sub"}


def typo(number: str, rng: random.Random) -> str:
    """A realistic mistyping of a number: swap two adjacent digits, or be off by one/ten."""
    digits = number.lstrip("-")
    swaps = [
        i
        for i in range(len(digits) - 1)
        if digits[i] != digits[i + 1] and not (i == 0 and digits[1] == "0")
    ]
    if swaps and "." not in digits and rng.random() < 0.6:
        i = rng.choice(swaps)
        digits = digits[:i] + digits[i + 1] + digits[i] + digits[i + 2 :]
        return ("-" if number.startswith("-") else "") + digits
    value = float(number) + rng.choice([-10, -1, 1, 10])
    if value <= 0:
        value = float(number) + 1
    return format_number(value)


_SWAP_AGG = {"total": "average", "average": "total", "largest": "smallest", "smallest": "largest"}


def _table_step(action: Action) -> tuple[str, str, str, str, int] | None:
    from whowhen.agents.table_qa import parse_sql_step

    return parse_sql_step(action)


def _wrong_title(action: Action, rng: random.Random) -> Action | None:
    from whowhen.benchmarks.doc_qa import CITIES, COMPANIES, FIRST

    title = str((action.tool_args or {}).get("title", ""))
    if title in COMPANIES:
        other = rng.choice([c for c in COMPANIES if c != title])
    elif title in CITIES:
        other = rng.choice([c for c in CITIES if c != title])
    elif " " in title:
        first, last = title.split(" ", 1)
        other = f"{rng.choice([f for f in FIRST if f != first])} {last}"
    else:
        return None
    return Action(action.actor, action.content, "read", {"title": other})


def wrong_operand(action: Action, rng: random.Random) -> Action | None:
    table = _table_step(action)
    if table is not None:  # table QA: the right aggregate over a neighbouring month
        from whowhen.agents.table_qa import sql_action

        agg, measure, product, region, month = table
        other = rng.choice([m for m in (month - 1, month + 1) if 1 <= m <= 6])
        return sql_action(action.actor, agg, measure, product, region, other)
    parsed = parse_calc(action)
    if parsed is None:
        return None
    op, a, n, _ = parsed
    value = int(float(n))
    candidates = [v for v in range(max(1, value - 3), value + 4) if v != value]
    if op == "div":
        total = float(a)
        candidates = [d for d in range(2, 10) if d != value and total % d == 0] or candidates
    return calc_action(action.actor, op, a, str(rng.choice(candidates)))


def wrong_operator(action: Action, rng: random.Random) -> Action | None:
    table = _table_step(action)
    if table is not None:  # table QA: a confused aggregate, stated and queried
        from whowhen.agents.table_qa import sql_action

        agg, *rest = table
        return sql_action(action.actor, _SWAP_AGG[agg], *rest)
    parsed = parse_calc(action)
    if parsed is None:
        return None
    op, a, n, _ = parsed
    return calc_action(action.actor, _CONFUSED_OP[op], a, n)


def wrong_tool_argument(action: Action, rng: random.Random) -> Action | None:
    if action.tool == "final_answer":
        answer = str((action.tool_args or {}).get("answer", ""))
        try:
            float(answer)
        except ValueError:
            return None
        return Action(action.actor, action.content, "final_answer", {"answer": typo(answer, rng)})
    if action.tool == "read":  # document QA: a neighbouring title, mistaken for the right one
        return _wrong_title(action, rng)
    table = _table_step(action)
    if table is not None:  # table QA: the intent is right, the query filters another region
        from whowhen.agents.table_qa import sql_action
        from whowhen.benchmarks.table_qa import REGIONS, query_for

        agg, measure, product, region, month = table
        other = rng.choice([r for r in REGIONS if r != region])
        return sql_action(
            action.actor,
            agg,
            measure,
            product,
            region,
            month,
            query=query_for(agg, measure, product, other, month),
        )
    parsed = parse_calc(action)
    if parsed is None:
        return None
    op, a, n, _ = parsed
    return calc_action(action.actor, op, a, n, expr_a=typo(a, rng))


_CORE: dict[str, Operator] = {
    "reasoning.wrong_operand": wrong_operand,
    "reasoning.wrong_operator": wrong_operator,
    "action.wrong_tool_argument": wrong_tool_argument,
}


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


def _registry() -> dict[str, Operator]:
    """Mode id -> operator, from the core operators above and each agents module's
    OPERATORS table (the operators for that benchmark's own tools and messages)."""
    from whowhen.benchmarks import builtin_modules

    by_mode: dict[str, list[Operator]] = {mode: [op] for mode, op in _CORE.items()}
    for mod in builtin_modules("agents").values():
        for mode, op in getattr(mod, "OPERATORS", {}).items():
            by_mode.setdefault(mode, []).append(op)
    return {mode: _combined(ops) for mode, ops in sorted(by_mode.items())}


OPERATORS: dict[str, Operator] = _registry()


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
