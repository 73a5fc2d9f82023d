from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from whowhen.assembly import make_system
from whowhen.benchmarks.arithmetic.actions import (
    calc_action,
    parse_calc,
    parse_proposal,
    progress,
)
from whowhen.benchmarks.arithmetic.env import ArithmeticEnv, normalize_answer
from whowhen.benchmarks.arithmetic.operators import OPERATORS as ARITHMETIC_OPERATORS
from whowhen.benchmarks.arithmetic.operators import premature_finish
from whowhen.benchmarks.arithmetic.tasks import Task, generate_tasks, parse_problem
from whowhen.errors import WhowhenError
from whowhen.operators import OPERATORS
from whowhen.registry import get_benchmark
from whowhen.runtime import Action, Episode, Step, run_episode, warm_start
from whowhen.tools import calculate

from .conftest import MAX_STEPS
from .operator_checks import valid_for_env


def test_generation_is_seeded() -> None:
    a, b = generate_tasks(20, seed=1), generate_tasks(20, seed=1)
    assert a == b
    assert a != generate_tasks(20, seed=2)
    assert len({t.task_id for t in a}) == 20


def test_intermediate_values_are_positive_integers() -> None:
    for task in generate_tasks(200, seed=3, min_ops=2, max_ops=6):
        assert 2 <= len(task.ops) <= 6
        value = task.start
        for op, n in task.ops:
            value = {"add": value + n, "sub": value - n, "mul": value * n, "div": value / n}[op]
            assert value == int(value) and value > 0
        assert value == task.answer


def test_parser_reads_back_every_problem() -> None:
    for task in generate_tasks(200, seed=4):
        start, ops = parse_problem(task.question)
        assert start == task.start and tuple(ops) == task.ops


def test_parser_rejects_text_without_start() -> None:
    with pytest.raises(ValueError):
        parse_problem("How many apples?")


@pytest.mark.parametrize(
    ("expr", "out"),
    [
        ("84 - 9", "75"),
        ("7 * 6", "42"),
        ("10 / 4", "2.5"),
        ("(2 + 3) * 4", "20"),
        ("1 / 0", "Error: division by zero"),
        ("__import__('os')", "Error: cannot evaluate"),
        ("2 ** 8", "Error: cannot evaluate"),
    ],
)
def test_calculator(expr: str, out: str) -> None:
    assert calculate(expr).startswith(out)


def test_exact_match_evaluator() -> None:
    assert normalize_answer(" 1,200.0 ") == "1200"
    assert normalize_answer("12") != normalize_answer("120")
    task = generate_tasks(1, seed=9)[0]
    env = ArithmeticEnv(task)
    env.reset()
    assert env.step(Action("a", "x", "calculator", {"expression": "2 + 2"})) == ("calculator", "4")
    assert env.step(Action("a", "just talking")) is None
    assert not env.done
    env.step(Action("a", "done", "final_answer", {"answer": f"{task.answer}.0"}))
    assert env.done and env.evaluate().success
    env.reset()
    env.step(Action("a", "done", "final_answer", {"answer": str(task.answer + 1)}))
    assert not env.evaluate().success


def test_registry_rejects_unknown_benchmark() -> None:
    with pytest.raises(WhowhenError, match="unknown benchmark"):
        get_benchmark("chess")


# --- operators of the arithmetic policies (planning, hand-off, verification) ------------

MARKERS = ("inject", "error", "wrong", "mistake", "slip", "oops")
FOREIGN = (
    Action("assistant", "The chart shows 64 for Lyon.", "calculator", {"expression": "64 - 31"}),
    Action("solver", "Lyon 64 minus Oslo 31 is 33. Proposed answer: 33."),
    Action("verifier", "Check failed: the question asks for the total. Please redo the query."),
    Action("assistant", "I will read about Bergen.", "read", {"title": "Bergen"}),
    Action("coder", "I will implement f.", "write_code", {"code": "def f():\n    return 1\n"}),
)


def _own(mode: str) -> tuple:
    """This package's operators of `mode` (a table value is one operator or a tuple)."""
    ops = ARITHMETIC_OPERATORS[mode]
    return ops if isinstance(ops, tuple) else (ops,)


def _sound(replaced: Action, original: Action, system: str) -> None:
    assert replaced is not None and replaced != original
    assert replaced.actor == original.actor
    assert valid_for_env(replaced, "arithmetic", system)
    text = f"{replaced.content} {replaced.tool_args}".lower()
    assert not any(word in text for word in MARKERS)


def _episode(system: str, index: int = 0) -> tuple[Task, Episode]:
    task = generate_tasks(10, seed=5)[index]
    return task, run_episode(ArithmeticEnv(task), make_system(system, "arithmetic"), MAX_STEPS)


def _recovered(index: int = 0) -> tuple[Task, Episode]:
    """A solver-verifier run where a wrong operator was caught and redone: the reference
    run itself when the solver's first attempt slipped up there, else one made so."""
    task, original = _episode("solver_verifier", index)
    if any(s.content.startswith("Check failed") for s in original.history):
        assert original.verdict.success
        return task, original
    first = next(s for s in original.history if parse_calc(s))
    op, a, n, _ = parse_calc(first)  # the solver's operator confused (no operator does it)
    swapped = calc_action("solver", {"add": "sub"}.get(op, "add"), a, n)
    system = make_system("solver_verifier", "arithmetic")
    result = warm_start(
        ArithmeticEnv(task), system, original.history, first.step, swapped, MAX_STEPS
    )
    assert result.episode.verdict.success
    return task, result.episode


def _replay(
    task: Task, system: str, history: Sequence[Step], step: int, replacement: Action
) -> bool:
    result = warm_start(
        ArithmeticEnv(task),
        make_system(system, "arithmetic"),
        history,
        step,
        replacement,
        MAX_STEPS,
    )
    assert result.fidelity.exact
    return result.episode.verdict.success


@pytest.mark.parametrize("mode", ["planning.premature_finish", "planning.wrong_subgoal"])
def test_planning_operators_on_react_steps(mode: str) -> None:
    task, episode = _episode("react")
    calcs = [s for s in episode.history if parse_calc(s)]  # operation steps, not re-checks
    step = calcs[1]
    replaced = OPERATORS[mode](step.as_action(), random.Random(0), episode.history[: step.step])
    _sound(replaced, step.as_action(), "react")
    if mode == "planning.premature_finish":
        assert replaced.tool == "final_answer"
        total = progress(episode.history[: step.step], "assistant").total
        assert replaced.tool_args == {"answer": total} and total in replaced.content
    else:
        assert replaced.tool == "calculator" and parse_calc(replaced) is not None
    assert not _replay(task, "react", episode.history, step.step, replaced)
    for foreign in FOREIGN:  # this module's operator (the registry's also tries others')
        for own in _own(mode):
            assert own(foreign, random.Random(0), episode.history[:1]) is None


def test_premature_finish_needs_one_operation_done_and_a_single_agent() -> None:
    _, episode = _episode("react")
    first = next(s for s in episode.history if parse_calc(s))
    assert premature_finish(first.as_action(), random.Random(0), episode.history[:1]) is None
    _, sv = _episode("solver_verifier")  # the verifier counts the solver's calculations
    second = [s for s in sv.history if parse_calc(s)][1]
    for mode in ("planning.premature_finish", "planning.wrong_subgoal"):
        for op in _own(mode):
            assert op(second.as_action(), random.Random(0), sv.history[: second.step]) is None


def test_distorted_handoff_miscopies_the_proposal() -> None:
    task, episode = _episode("solver_verifier")
    step = [s for s in episode.history if "Proposed answer" in s.content][-1]  # approved
    op = OPERATORS["coordination.distorted_handoff"]
    replaced = op(step.as_action(), random.Random(0), episode.history[: step.step])
    _sound(replaced, step.as_action(), "solver_verifier")
    (n, total, style), (n2, total2, style2) = map(parse_proposal, (step.content, replaced.content))
    assert (n, style) == (n2, style2) and total != total2  # same wording, another number
    assert not _replay(task, "solver_verifier", episode.history, step.step, replaced)
    for foreign in FOREIGN:
        for own in _own("coordination.distorted_handoff"):
            assert own(foreign, random.Random(0), episode.history[:1]) is None


def test_false_approval_and_ignored_message_after_a_rejection() -> None:
    task, episode = _recovered()
    history = episode.history
    rejection = next(s for s in history if s.content.startswith("Check failed"))
    approve = OPERATORS["verification.false_approval"]
    approval = approve(rejection.as_action(), random.Random(0), history[: rejection.step])
    _sound(approval, rejection.as_action(), "solver_verifier")
    assert approval.tool == "final_answer" and approval.tool_args["answer"] in approval.content
    assert not _replay(task, "solver_verifier", history, rejection.step, approval)
    proposals = [s for s in history if "Proposed answer" in s.content]
    ignore = OPERATORS["coordination.ignored_message"]
    resent = ignore(proposals[-1].as_action(), random.Random(0), history[: proposals[-1].step])
    _sound(resent, proposals[-1].as_action(), "solver_verifier")
    assert resent.content == proposals[0].content
    assert not _replay(task, "solver_verifier", history, proposals[-1].step, resent)
    # without a rejection before it, a proposal is not a reply to be ignored
    assert ignore(proposals[0].as_action(), random.Random(0), history[: proposals[0].step]) is None
    for foreign in FOREIGN:
        for mode in ("verification.false_approval", "coordination.ignored_message"):
            for own in _own(mode):
                assert own(foreign, random.Random(0), history[:1]) is None
