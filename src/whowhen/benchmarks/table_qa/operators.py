"""Error operators for the table-QA steps and messages, one per taxonomy mode.

Every step of the policies states part of the agent's working belief (`forms`), and the
steps after it go on from what it states. So each operator reads the step into its kind,
wording and fields, changes one field the step's text states and later steps go on from
(`_carried`), and builds the step again in the same kind and wording (`_restate`): the
wrong month, region, product, measure,
aggregate or value is what the step says it believes, and its SQL computes exactly that.
It is wrong only against the question and the history (tests/test_coherence_table_qa.py
holds every operator to that), and it reaches the answer whichever step it is made at: a
plan, a peek, a note, a count, a cross-check, an acknowledgement or a send-back.

Which field each mode changes: reasoning.wrong_operand the month (a query's operand),
reasoning.wrong_operator the aggregate (in the lone agent's steps only: the verifier
checks the aggregate against the question, so there it is always caught and redone),
planning.wrong_subgoal the measure, action.wrong_tool_argument a query's region or
product, perception.misread_value a value found (or a note's month),
perception.misidentified_object a note's product or region, coordination.distorted_handoff
any of them but the aggregate in a message between the solver and the verifier, and
verification.false_approval answers with the proposal a send-back rejects. A send-back
that only asks for the row count rejects a right value, so approving it is no error and
the operator does not apply there. No mode was dropped for a contradiction
(coordination.ignored_message has no table-QA operator, as before: a solver that ignores
a send-back re-sends the proposal the verifier then rejects again).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from whowhen.benchmarks.base import Operator, covers
from whowhen.benchmarks.table_qa.actions import REJECTION, approve, last_proposal
from whowhen.benchmarks.table_qa.forms import Reading, build, read
from whowhen.benchmarks.table_qa.tasks import MEASURES, PRODUCTS, REGIONS
from whowhen.runtime import Action, Step
from whowhen.slips import typo

_LOOKALIKE = {"1": "7", "7": "1", "3": "8", "8": "3", "5": "6", "6": "5", "0": "8"}
_SWAP_AGG = {"total": "average", "average": "total", "largest": "smallest", "smallest": "largest"}
_WORKERS = ("assistant", "solver")


def misread(value: str, rng: random.Random) -> str:
    """A value read off wrongly: two adjacent digits swapped (the decimal point stays where
    it is) or a look-alike digit (1/7, 3/8, 5/6, 0/8)."""
    chars = list(value)
    swaps = [
        i
        for i in range(len(chars) - 1)
        if chars[i].isdigit()
        and chars[i + 1].isdigit()
        and chars[i] != chars[i + 1]
        and not (i == 0 and chars[1] == "0")
    ]
    alike = [
        i for i, c in enumerate(chars) if c in _LOOKALIKE and not (i == 0 and _LOOKALIKE[c] == "0")
    ]
    if swaps and (rng.random() < 0.6 or not alike):
        i = rng.choice(swaps)
        chars[i], chars[i + 1] = chars[i + 1], chars[i]
    elif alike:
        i = rng.choice(alike)
        chars[i] = _LOOKALIKE[chars[i]]
    else:
        return typo(value, rng)
    return "".join(chars)


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _other(name: str, value: str, rng: random.Random) -> str | None:
    """Another plausible value of a field: a neighbouring month, the other measure or
    aggregate, another product or region, a misread number."""
    if name == "month":
        month = int(value)
        near = [m for m in (month - 1, month + 1) if 1 <= m <= 6]
        return str(rng.choice(near)) if near else None
    if name == "agg":
        return _SWAP_AGG[value]
    if name == "measure":
        return next(m for m in MEASURES if m != value)
    if name in ("product", "region"):
        return rng.choice([v for v in (PRODUCTS if name == "product" else REGIONS) if v != value])
    if name == "value" and _numeric(value):
        return misread(value, rng)
    return None


def _carried(reading: Reading, history: Sequence[Step]) -> frozenset[str]:
    """The stated fields that later steps go on from (an operator changes only those): a
    send-back's target, which the solver redoes, but the value of a send-back that only
    asks for the row count (the solver counts and proposes that value again); a
    proposal's value, but the product and region of a proposal of a month-less aggregate
    (its value is rejected and recomputed, for the target it names); a recap's value; a
    note on the aggregate's target (the cross-check recomputes its value)."""
    if reading.kind == "recap":  # only its value is answered
        return reading.stated & {"value"}
    if reading.kind == "note.agg":  # the cross-check recomputes its value
        return reading.stated - {"value"}
    if reading.kind == "reject.count":
        return reading.stated & {"value"}
    if reading.kind.startswith("reject."):
        return reading.stated - {"value", "answer"}
    if reading.kind == "proposal":  # the value, or what a month-less query was about
        last = next((s for s in reversed(history) if s.actor == "solver" and s.tool == "sql"), None)
        found = read(last) if last is not None else None
        broad = found is not None and found.kind == "broad"
        return reading.stated & ({"product", "region"} if broad else {"value"})
    return reading.stated


def _restate(
    action: Action,
    rng: random.Random,
    names: Sequence[str],
    history: Sequence[Step] = (),
    pick: bool = False,
) -> Action | None:
    """The step with the first of `names` that its text states and later steps go on from
    (a random one of them with `pick`) changed, in the step's own kind and wording; None
    if it states none."""
    reading = read(action)
    if reading is None:
        return None
    carried = _carried(reading, history)
    choices = [n for n in names if n in carried]
    if pick:
        rng.shuffle(choices)
    for name in choices:
        new = _other(name, reading.fields[name], rng)
        if new is not None:
            fields = {**reading.fields, name: new}
            return build(reading.kind, reading.index, action.actor, **fields)
    return None


def _worker(action: Action, *tools: str | None) -> bool:
    return action.actor in _WORKERS and action.tool in tools


@covers("react", "solver_verifier")
def wrong_operand(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """reasoning.wrong_operand: a query over a neighbouring month, stated and queried."""
    return _restate(action, rng, ("month",)) if action.tool == "sql" else None


@covers("react")
def wrong_operator(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """reasoning.wrong_operator: the confused aggregate (total/average, largest/smallest),
    stated and computed, in a lone agent's plan, query or cross-check."""
    if action.actor != "assistant" or action.tool not in ("sql", None):
        return None
    return _restate(action, rng, ("agg",))


@covers("react", "solver_verifier")
def wrong_subgoal(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """planning.wrong_subgoal: the other measure (units for revenue or the reverse) is
    what the step sets out to look at and aggregate."""
    return _restate(action, rng, ("measure",)) if _worker(action, "sql", None) else None


@covers("react", "solver_verifier")
def wrong_tool_argument(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """action.wrong_tool_argument: a query on another region or product, the one the step
    states and filters (the agent copied it wrongly). Not the filter in the query alone:
    a query that filters another region than its text names contradicts itself."""
    if action.tool != "sql":
        return None
    return _restate(action, rng, ("region", "product"), pick=True)


@covers("react", "solver_verifier")
def misread_value(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """perception.misread_value: a value found (a note's, the answer's, the approval's) or
    a note's month, read off wrongly and carried on."""
    if _worker(action, None, "final_answer"):
        return _restate(action, rng, ("value", "month"), history)
    if action.actor == "verifier" and action.tool == "final_answer":
        return _restate(action, rng, ("value",), history)
    return None


@covers("react", "solver_verifier")
def misidentified_object(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """perception.misidentified_object: a note takes another product or region for the
    one the question is about."""
    if not _worker(action, None):
        return None
    return _restate(action, rng, ("product", "region"), pick=True)


@covers("solver_verifier")
def distorted_handoff(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """coordination.distorted_handoff: a message between the solver and the verifier (a
    note, a proposal, an acknowledgement, a send-back) passes on another month, region,
    product, measure or value than the one found; the other agent goes on from it."""
    if action.tool is not None or action.actor not in ("solver", "verifier"):
        return None
    names = ("value", "month", "region", "product", "measure")
    return _restate(action, rng, names, history, pick=True)


@covers("solver_verifier")
def false_approval(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """verification.false_approval: instead of sending the solver back, the verifier
    answers with the solver's last proposal, in its approval wording (not where the
    send-back only asks for the row count of a value it does not question)."""
    if action.actor != "verifier" or action.tool is not None:
        return None
    if not REJECTION.match(action.content) or not history:
        return None
    reading = read(action)
    if reading is not None and reading.kind == "reject.count":
        return None
    proposal = last_proposal(history)
    return approve(proposal[0], history) if proposal and proposal[0] else None


OPERATORS: dict[str, Operator] = {
    "reasoning.wrong_operand": wrong_operand,
    "reasoning.wrong_operator": wrong_operator,
    "action.wrong_tool_argument": wrong_tool_argument,
    "planning.wrong_subgoal": wrong_subgoal,
    "perception.misread_value": misread_value,
    "perception.misidentified_object": misidentified_object,
    "coordination.distorted_handoff": distorted_handoff,
    "verification.false_approval": false_approval,
}
"""Taxonomy mode -> operator for this benchmark's queries, notes, answers and messages."""
