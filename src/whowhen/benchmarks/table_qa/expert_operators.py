"""Error operators for the data-analysis group chat's steps on table QA, each under the
taxonomy mode it is an instance of. Each re-says the step with the policy's own forms
(`expert_forms`), so an injected step reads like the policy's:

- the aggregate's program filters a neighbouring month, said so too (reasoning.wrong_operand);
- the aggregate's program computes the other aggregate (total and average, largest and
  smallest swap), said so too (reasoning.wrong_operator);
- the aggregate's program skips its first row "as the header", which `csv.DictReader` has
  already read (reasoning.logic_bug);
- the proposal states the value with two digits swapped, or, after the terminal reported
  an error, the expert reads the empty output as "no matching rows" and proposes 0 (an
  ignored tool error; both perception.misread_value);
- the expert proposes the first listed value instead of computing the aggregate
  (planning.premature_finish);
- the verifier approves a proposal it should send back (verification.false_approval);
- the expert proposes its old value again after a send-back (coordination.ignored_message);
- a report to or from the DataAnalysis_Expert restates a neighbouring month, which the
  next program takes on (coordination.distorted_handoff).

A careful verifier's recomputation catches a value that its own program disagrees with;
a wrong target stated and computed it checks against the same statement, and passes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.table_qa.expert_forms import (
    ACK,
    AGG,
    ANALYST,
    CHECKER,
    CHECKIN,
    CODER,
    PROPOSE,
    REDO,
    Target,
    agg_code,
    believed,
    filters_month,
    listed,
    program_kind,
    target_of,
)
from whowhen.benchmarks.table_qa.experts import (
    _sends_back,
    approval,
    last_proposal,
    sent_back_at,
)
from whowhen.runtime import Action, Step
from whowhen.tools import code_of, failed, output_after, program, programs, said

_OTHER_AGG = {"total": "average", "average": "total", "largest": "smallest", "smallest": "largest"}


def _aggregate_step(action: Action) -> tuple[Form, int, dict[str, str]] | None:
    """(form, wording index, fields) of an aggregate program by the Python_Expert."""
    if action.actor != CODER or program_kind(code_of(action)) != "agg":
        return None
    for form in (AGG, REDO):
        found = form.read(said(action))
        if found is not None:
            return form, *found
    return None


def _neighbour_month(month: str, rng: random.Random) -> str:
    m = int(month)
    return str(rng.choice([x for x in (m - 1, m + 1) if 1 <= x <= 6]))


def _aggregate(action: Action, history: Sequence[Step]) -> tuple[Form, int, Target] | None:
    """(form, wording index, the target it computes) of an aggregate program, else None."""
    found = _aggregate_step(action)
    if found is None:
        return None
    form, index, fields = found
    return form, index, target_of(fields, believed(history))


def _resay(
    action: Action, history: Sequence[Step], change: Callable[[Target], dict[str, str]]
) -> Action | None:
    """The aggregate program re-said, text and code, for the target `change` makes."""
    found = _aggregate(action, history)
    if found is None:
        return None
    form, index, t = found
    t = t.with_(**change(t))
    code = agg_code(t, month=filters_month(code_of(action)))
    return program(CODER, form.at(index, **t.fields()), code)


@covers("expert_chat")
def other_month(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """reasoning.wrong_operand: the aggregate is computed over a neighbouring month."""
    return _resay(action, history, lambda t: {"month": _neighbour_month(t.month, rng)})


@covers("expert_chat")
def other_aggregate(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """reasoning.wrong_operator: the program computes the other aggregate of the rows."""
    return _resay(action, history, lambda t: {"agg": _OTHER_AGG[t.agg]})


@covers("expert_chat")
def skipped_first_row(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """reasoning.logic_bug: the program drops the first matching row as if it were the
    header, which the CSV reader has already consumed."""
    found = _aggregate(action, history)
    if found is None:
        return None
    t = found[2]
    code = agg_code(t, month=filters_month(code_of(action)), skip_first=True)
    return program(CODER, said(action), code)


def _swap_digits(value: str, rng: random.Random) -> str | None:
    digits = [i for i in range(len(value) - 1) if value[i].isdigit() and value[i + 1].isdigit()]
    pairs = [i for i in digits if value[i] != value[i + 1] and not (i == 0 and value[1] == "0")]
    if not pairs:
        return None
    i = rng.choice(pairs)
    return value[:i] + value[i + 1] + value[i] + value[i + 2 :]


@covers("expert_chat")
def misread_result(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """perception.misread_value: the proposal carries the printed value with two digits
    swapped."""
    fields = PROPOSE.fields(action.content) if action.actor == CODER and not action.tool else None
    if fields is None:
        return None
    value = _swap_digits(fields["value"], rng)
    if value is None:
        return None
    index = PROPOSE.read(action.content)[0]  # type: ignore[index]
    return Action(CODER, PROPOSE.at(index, **{**fields, "value": value}))


@covers("expert_chat")
def error_read_as_empty(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> Action | None:
    """perception.misread_value: the program failed (the terminal printed an error), and
    instead of fixing it the expert takes the empty output for no matching rows."""
    if action.actor != CODER or program_kind(code_of(action)) != "list":
        return None
    mine = programs(history, CODER)
    if not mine or not failed(output_after(history, mine[-1])):
        return None
    t = believed(history)
    value = "0" if t.agg == "total" else "0.0"
    return Action(CODER, PROPOSE.say(history, **t.fields(), value=value))


@covers("expert_chat")
def first_listed(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """planning.premature_finish: instead of computing the aggregate, the expert proposes
    the first value its listing printed."""
    found = _aggregate(action, history)
    if found is None:
        return None
    lists = [s for s in programs(history, CODER) if program_kind(code_of(s)) == "list"]
    values = listed(output_after(history, lists[-1])) if lists else []
    if not values:
        return None
    t = found[2]
    return Action(CODER, PROPOSE.say(history, **t.fields(), value=values[0]))


@covers("expert_chat")
def approved_anyway(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """verification.false_approval: the verifier approves the proposal it was about to
    send back."""
    if action.actor != CHECKER or action.tool is not None or not _sends_back(action):
        return None
    found = last_proposal(history)
    if found is None:
        return None
    t = target_of(found[-1], believed(history))
    return approval(history, t, found[1]["value"], "\n\nTERMINATE")


@covers("expert_chat")
def old_value_again(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """coordination.ignored_message: after a send-back the expert proposes its earlier
    value again, as if the verifier had not written."""
    since = sent_back_at(history)
    if action.actor != CODER or not since or programs(history, CODER, since):
        return None
    if any(s.actor == CODER for s in history[since + 1 :]):
        return None
    found = last_proposal(history)
    if found is None:
        return None
    return Action(CODER, PROPOSE.say(history, **found[1]))


@covers("expert_chat")
def other_month_said(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """coordination.distorted_handoff: the report of the listing, or the
    DataAnalysis_Expert's reply, names a neighbouring month."""
    form = CHECKIN if action.actor == CODER else ACK if action.actor == ANALYST else None
    found = form.read(action.content) if form is not None and not action.tool else None
    if form is None or found is None:
        return None
    index, fields = found
    fields = {**fields, "month": _neighbour_month(fields["month"], rng)}
    return Action(action.actor, form.at(index, **fields))


OPERATORS = {
    "reasoning.wrong_operand": other_month,
    "reasoning.wrong_operator": other_aggregate,
    "reasoning.logic_bug": skipped_first_row,
    "perception.misread_value": (misread_result, error_read_as_empty),
    "planning.premature_finish": first_listed,
    "verification.false_approval": approved_anyway,
    "coordination.ignored_message": old_value_again,
    "coordination.distorted_handoff": other_month_said,
}
"""Taxonomy mode -> the data-analysis chat's operator for it."""
