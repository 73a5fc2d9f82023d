"""Error operators for the HumanEval expert group chat's steps, each under the taxonomy mode
it is an instance of. Each re-says the step with the policy's own builders
(`expert_forms`, `experts`), so an injected step reads like the policy's:

- a program (the Python_Expert's, the Testing_Expert's or the verifier's re-run) is run
  with its key line as one of the task's subtle variants (`variants`: the docstring
  examples still pass, the hidden tests fail), which every later step takes on: a logic
  variant (reasoning.logic_bug), a miscopied name or number
  (action.wrong_tool_argument), another operand (reasoning.wrong_operand) or another
  operator (reasoning.wrong_operator);
- after its own run failed an example, the Python_Expert reads the output as passing and
  hands the code on (perception.misread_value: an ignored tool error);
- the Testing_Expert, asked to run the examples the Python_Expert left out, runs only its
  edge cases and reports (planning.premature_finish);
- the Testing_Expert reports a failing run as passing, or the verifier approves the code
  it was about to send back (verification.false_approval);
- after a send-back the Python_Expert proposes its code again unchanged, as if the
  verifier had not written (coordination.ignored_message);
- a hand-off, report, proposal or send-back passes the key line on as a subtle variant
  (coordination.distorted_handoff).

The package's key-line operators (`operators`) apply to the chat too: a message that
quotes its key line wrongly (perception.misread_value, reasoning.wrong_operator), and the
approval's program with a wrong key line (reasoning.logic_bug, action.wrong_tool_argument,
reasoning.wrong_operand). A verifier that re-runs the examples itself (`experts.CAREFUL_P`)
catches a failing program that was read, reported or proposed as passing; a subtle variant
it passes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from whowhen.benchmarks.base import covers
from whowhen.benchmarks.humaneval.actions import kind_of
from whowhen.benchmarks.humaneval.expert_forms import (
    CHECKER,
    CODER,
    FAILURES,
    HANDOFF_ALL,
    HANDOFF_BARE,
    HANDOFF_QUICK,
    PROPOSE,
    REJECT,
    TESTER,
    TESTER_REPORTS,
    program,
    reads_as,
    run_outcome,
)
from whowhen.benchmarks.humaneval.experts import (
    after_pass,
    approval,
    edge_calls,
    fields,
    report,
    tester_run,
)
from whowhen.benchmarks.humaneval.operators import (
    ANY,
    COPY,
    LOGIC,
    OPERAND,
    OPERATOR,
    _restate,
    varied,
)
from whowhen.runtime import Action, Step
from whowhen.tools import TERMINAL, last_agent, output_after, said

AGENTS = (CODER, TESTER, CHECKER)
HANDOFFS = (HANDOFF_ALL, HANDOFF_BARE, HANDOFF_QUICK, PROPOSE, *TESTER_REPORTS, REJECT)
"""The messages that pass a finding or an instruction on to another expert."""


def _reprogram(
    action: Action, history: Sequence[Step], kinds: Sequence[str], rng: random.Random
) -> Action | None:
    """A program step with its key line replaced by a subtle variant of `kinds`: the same
    message, the program quoted and run with the new line (its checks kept)."""
    code = str((action.tool_args or {}).get("code", ""))
    if action.tool != TERMINAL or action.actor not in AGENTS:
        return None
    new = varied(code, history, kinds, rng)
    return program(action.actor, said(action), new) if new is not None else None


@covers("expert_chat")
def logic_bug(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """reasoning.logic_bug: the program runs the function with a wrong key line (a subtle
    logic variant), which every later program and the approval keep."""
    return _reprogram(action, history, LOGIC, rng)


@covers("expert_chat")
def miscopied(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """action.wrong_tool_argument: the program is the intended one with its key line
    miscopied (a short name or two digits swapped, a number one off)."""
    return _reprogram(action, history, COPY, rng)


@covers("expert_chat")
def other_operand(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """reasoning.wrong_operand: the program's key line applies the right operation to a
    wrong quantity (another local variable, the operands swapped, a number off)."""
    return _reprogram(action, history, OPERAND, rng)


@covers("expert_chat")
def other_operator(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """reasoning.wrong_operator: the program's key line applies another operation
    (comparison, arithmetic, `and`/`or`, `not`, `min`/`max`) to the same operands."""
    return _reprogram(action, history, OPERATOR, rng)


@covers("expert_chat")
def failure_read_as_passing(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> Action | None:
    """perception.misread_value: the Python_Expert's run failed an example (the terminal
    printed it), and instead of fixing the code it reads the output as passing and hands
    the code on, as it does after a passing run."""
    last = last_agent(history)
    if action.actor != CODER or last is None or last.actor != CODER or last.tool != TERMINAL:
        return None
    ok, _, checked, _ = run_outcome(output_after(history, last))
    if ok or not checked:
        return None
    return after_pass(history)


@covers("expert_chat")
def examples_left_out(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """planning.premature_finish: asked to run the docstring examples the Python_Expert
    left out, the Testing_Expert runs only its edge cases and reports on them."""
    code = str((action.tool_args or {}).get("code", ""))
    if action.actor != TESTER or action.tool != TERMINAL or kind_of(code) != "examples":
        return None
    if not edge_calls(history):
        return None
    return tester_run(history, with_examples=False)


@covers("expert_chat")
def passed_anyway(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """verification.false_approval: the Testing_Expert reports its failing run as a pass
    (its own pass report); the verifier approves unless it re-runs the examples."""
    last = last_agent(history)
    if action.actor != TESTER or reads_as(action, *FAILURES) is None:
        return None
    if last is None or last.actor != TESTER or last.tool != TERMINAL:
        return None
    return report(history, last, read_as_passing=True)


@covers("expert_chat")
def approved_anyway(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """verification.false_approval: the verifier approves the code it was about to send
    back with a failing call."""
    if action.actor != CHECKER or reads_as(action, REJECT) is None or not history:
        return None
    return approval(history)


@covers("expert_chat")
def proposed_again(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """coordination.ignored_message: after the verifier's send-back the Python_Expert
    proposes its code again unchanged, as if the verifier had not written."""
    last = last_agent(history)
    if action.actor != CODER or last is None or reads_as(last, REJECT) is None:
        return None
    return Action(CODER, PROPOSE.say(history, **fields(history)))


@covers("expert_chat")
def other_line_passed_on(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> Action | None:
    """coordination.distorted_handoff: a hand-off, report, proposal or send-back passes the
    key line on as a subtle variant; the next program is written with that line."""
    if action.actor not in AGENTS or reads_as(action, *HANDOFFS) is None:
        return None
    return _restate(action, history, ANY, rng)


OPERATORS = {
    "reasoning.logic_bug": logic_bug,
    "action.wrong_tool_argument": miscopied,
    "reasoning.wrong_operand": other_operand,
    "reasoning.wrong_operator": other_operator,
    "perception.misread_value": failure_read_as_passing,
    "planning.premature_finish": examples_left_out,
    "verification.false_approval": (passed_anyway, approved_anyway),
    "coordination.ignored_message": proposed_again,
    "coordination.distorted_handoff": other_line_passed_on,
}
"""Taxonomy mode -> the expert group chat's operators for it."""
