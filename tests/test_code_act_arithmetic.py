from __future__ import annotations

import random

from whowhen.assembly import make_system
from whowhen.benchmarks.arithmetic.actions import code_action, parse_code, progress
from whowhen.benchmarks.arithmetic.env import ArithmeticEnv
from whowhen.benchmarks.arithmetic.policies import POLICIES
from whowhen.benchmarks.arithmetic.tasks import generate_tasks
from whowhen.operators import OPERATORS, random_slip
from whowhen.runtime import Action, run_episode, warm_start

from .conftest import MAX_STEPS
from .operator_checks import valid_for_env

TASKS = generate_tasks(15, seed=6)
CORE = ("reasoning.wrong_operand", "reasoning.wrong_operator", "action.wrong_tool_argument")


def test_code_act_solves_every_task_one_program_per_operation() -> None:
    assert set(POLICIES) >= {"react", "solver_verifier", "code_act"}
    for task in TASKS:
        episode = run_episode(ArithmeticEnv(task), make_system("code_act", "arithmetic"), MAX_STEPS)
        assert episode.verdict.success, task.question
        runs = [s for s in episode.history if parse_code(s) is not None]
        assert len(runs) == len(task.ops)  # besides them, only test programs
        assert episode.history[-1].tool == "final_answer"


def test_code_steps_round_trip_and_divide_exactly() -> None:
    action = code_action("assistant", "div", "24", "3")
    assert action.tool_args == {"code": "print(24 // 3)"}
    assert parse_code(action) == ("div", "24", "3", "24")
    assert (
        parse_code(Action("assistant", "I will print.", "run_python", {"code": "print(1)"})) is None
    )
    assert parse_code(code_action("a", "add", "5", "2", code_a="50")) == ("add", "5", "2", "50")


def test_core_operators_apply_to_code_steps() -> None:
    action = code_action("assistant", "sub", "84", "9")
    rng = random.Random(2)
    operand = parse_code(OPERATORS["reasoning.wrong_operand"](action, rng))
    assert operand[0] == "sub" and operand[1] == "84" and operand[2] != "9"
    operator = parse_code(OPERATORS["reasoning.wrong_operator"](action, rng))
    assert operator[0] != "sub" and operator[1:3] == ("84", "9")
    typo = OPERATORS["action.wrong_tool_argument"](action, rng)
    t = parse_code(typo)  # the mistyped total, stated and run alike
    assert t[0] == "sub" and t[2] == "9" and t[1] == t[3] != "84"
    other = Action("assistant", "Let me check.", "run_python", {"code": "print(2 + 2)"})
    for mode in CORE:
        assert OPERATORS[mode](other, rng) is None  # not a step in the policy's form
    assert OPERATORS["reasoning.logic_bug"](action, rng) is None


def test_injected_wrong_operand_propagates() -> None:
    system = make_system("code_act", "arithmetic")
    for task in TASKS[:5]:
        original = run_episode(ArithmeticEnv(task), system, MAX_STEPS)
        t = next(s.step for s in original.history if parse_code(s) is not None)
        wrong = OPERATORS["reasoning.wrong_operand"](
            original.history[t].as_action(), random.Random(0)
        )
        result = warm_start(ArithmeticEnv(task), system, original.history, t, wrong, MAX_STEPS)
        assert result.fidelity.exact and not result.episode.verdict.success


def test_slips_at_rate_one_fail_without_crashing() -> None:
    outcomes = []
    for task in TASKS[:8]:
        policy = make_system("code_act", "arithmetic", slip_rate=1.0, slip=random_slip)
        episode = run_episode(ArithmeticEnv(task), policy, MAX_STEPS)
        assert not episode.end_reason.startswith("error"), episode.end_reason
        assert policy.slips
        outcomes.append(episode.verdict.success)
    assert not any(outcomes)


def test_planning_operators_on_code_steps() -> None:
    apply = {"add": int.__add__, "sub": int.__sub__, "mul": int.__mul__, "div": int.__floordiv__}
    # a task whose total after the first operation is not already the answer
    task = next(t for t in TASKS if apply[t.ops[0][0]](t.start, t.ops[0][1]) != t.answer)
    system = make_system("code_act", "arithmetic")
    original = run_episode(ArithmeticEnv(task), system, MAX_STEPS)
    runs = [s for s in original.history if parse_code(s) is not None]
    first, second = runs[0], runs[1]
    finish = OPERATORS["planning.premature_finish"]
    assert finish(first.as_action(), random.Random(0), original.history[: first.step]) is None
    early = finish(second.as_action(), random.Random(0), original.history[: second.step])
    assert early.tool == "final_answer" and early.actor == "assistant"
    total = progress(original.history[: second.step], "assistant", tool="run_python").total
    assert early.tool_args == {"answer": total}
    assert valid_for_env(early, "arithmetic", "code_act")
    skip = OPERATORS["planning.wrong_subgoal"](
        first.as_action(), random.Random(0), original.history[: first.step]
    )
    assert parse_code(skip) is not None and skip != first.as_action()
    assert valid_for_env(skip, "arithmetic", "code_act")
    for step, replaced in ((second.step, early), (first.step, skip)):
        text = f"{replaced.content} {replaced.tool_args}".lower()
        assert not any(w in text for w in ("inject", "error", "wrong", "mistake", "slip"))
        result = warm_start(
            ArithmeticEnv(task), system, original.history, step, replaced, MAX_STEPS
        )
        assert result.fidelity.exact and not result.episode.verdict.success
    other = Action("assistant", "Let me check.", "run_python", {"code": "print(2 + 2)"})
    for mode in ("planning.premature_finish", "planning.wrong_subgoal"):
        assert OPERATORS[mode](other, random.Random(0), original.history[:1]) is None
