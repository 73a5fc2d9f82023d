from __future__ import annotations

import random

import pytest

from whowhen.assembly import make_system
from whowhen.benchmarks.arithmetic.actions import calc_action, parse_calc
from whowhen.benchmarks.arithmetic.env import ArithmeticEnv
from whowhen.benchmarks.arithmetic.tasks import generate_tasks
from whowhen.errors import WhowhenError
from whowhen.operators import random_slip
from whowhen.runtime import run_episode

TASKS = generate_tasks(40, seed=21)


@pytest.mark.parametrize("system", ["react", "solver_verifier"])
def test_reference_policies_solve_every_task(system: str) -> None:
    for task in TASKS:
        episode = run_episode(ArithmeticEnv(task), make_system(system, "arithmetic"), 80)
        assert episode.end_reason == "done"
        assert episode.verdict is not None and episode.verdict.success, task.question


def test_history_layout_matches_who_and_when_convention() -> None:
    episode = run_episode(ArithmeticEnv(TASKS[0]), make_system("react", "arithmetic"), 80)
    steps = episode.history
    assert [s.step for s in steps] == list(range(len(steps)))
    assert steps[0].actor == "user" and steps[0].kind == "message"
    assert steps[1].actor == "assistant" and steps[1].kind == "message"  # the plan
    call = next(s for s in steps if s.tool == "calculator")
    assert call.actor == "assistant" and call.kind == "action"
    assert steps[call.step + 1].actor == "calculator"
    assert steps[call.step + 1].kind == "observation"
    assert steps[-1].tool == "final_answer"


def test_multi_agent_roles() -> None:
    episode = run_episode(ArithmeticEnv(TASKS[1]), make_system("solver_verifier", "arithmetic"), 80)
    actors = [s.actor for s in episode.history if s.is_agent_step]
    assert set(actors) == {"solver", "verifier"}
    assert episode.history[-1].actor == "verifier"
    assert episode.history[-1].tool == "final_answer"


def test_slip_model_is_seeded_and_causes_natural_failures() -> None:
    def outcomes(seed: int) -> list[bool]:
        return [
            run_episode(
                ArithmeticEnv(t), make_system("react", "arithmetic", 0.3, seed, random_slip), 80
            ).verdict.success
            for t in TASKS
        ]

    first = outcomes(1)
    assert first == outcomes(1)
    assert 0 < first.count(False) < len(first)


def test_calc_action_roundtrip() -> None:
    action = calc_action("solver", "sub", "84", "9")
    assert action.tool_args == {"expression": "84 - 9"}
    assert parse_calc(action) == ("sub", "84", "9", "84")
    wrong = calc_action("solver", "sub", "84", "9", expr_a="48")
    assert parse_calc(wrong) == ("sub", "84", "9", "48")
    assert random_slip(action, random.Random(0)) != action


def test_unknown_system() -> None:
    with pytest.raises(WhowhenError, match="unknown system"):
        make_system("swarm", "arithmetic")


def test_proposed_answer_and_turn_taking() -> None:
    from whowhen.agents.scripted import proposed_answer
    from whowhen.runtime import Step

    history = [
        Step(0, "user", "message", "task"),
        Step(1, "solver", "message", "I have applied all 3 operations. Proposed answer: 7.5."),
    ]
    assert proposed_answer(history) == "7.5"
    assert proposed_answer(history[:1]) == ""
    # after the solver's proposal it is the verifier's turn, on every benchmark's system
    system = make_system("solver_verifier", "arithmetic")
    task = TASKS[2]
    episode = run_episode(ArithmeticEnv(task), system, 80)
    proposal = next(i for i, s in enumerate(episode.history) if "Proposed answer" in s.content)
    assert episode.history[proposal + 1].actor == "verifier"
