from __future__ import annotations

import dataclasses
import itertools

import polars as pl
import pytest

from whowhen.assembly import make_system
from whowhen.benchmarks.arithmetic.env import ArithmeticEnv
from whowhen.benchmarks.arithmetic.tasks import generate_tasks
from whowhen.errors import WhowhenError
from whowhen.runtime import Action, Episode, run_episode, warm_start
from whowhen.runtime.records import step_rows, steps_from_frame
from whowhen.runtime.types import StepCost
from whowhen.schema import STEPS, to_arrow

TASK = generate_tasks(3, seed=8)[2]


def _record(system: str = "solver_verifier"):
    return run_episode(ArithmeticEnv(TASK), make_system(system, "arithmetic"), 80)


def _observations(history) -> list[int]:
    """Indices of the calculator's observations (the run opens with a plan message)."""
    return [s.step for s in history if s.kind == "observation"]


class DriftingEnv(ArithmeticEnv):
    """A calculator that is not deterministic across resets: warm start must notice."""

    _counter = itertools.count()

    def step(self, action: Action):
        result = super().step(action)
        if result and result[0] == "calculator":
            return "calculator", f"{result[1]} (t={next(self._counter)})"
        return result


@pytest.mark.parametrize("system", ["react", "solver_verifier"])
def test_identity_replacement_reproduces_the_run(system: str) -> None:
    original = _record(system)
    agent_steps = [s for s in original.history if s.is_agent_step]
    for step in agent_steps:
        result = warm_start(
            ArithmeticEnv(TASK),
            make_system(system, "arithmetic"),
            original.history,
            step.step,
            step.as_action(),
            80,
        )
        assert result.fidelity.exact
        assert result.fidelity.checked == 1 + sum(
            1 for s in original.history[: step.step] if s.kind == "observation"
        )
        assert result.episode.history == original.history
        assert result.episode.verdict == original.verdict


def test_replacement_changes_only_from_step_t() -> None:
    original = _record("react")
    t = _observations(original.history)[0] - 1  # the first calculation
    wrong = Action("assistant", original.history[t].content, "calculator", {"expression": "1 + 1"})
    result = warm_start(
        ArithmeticEnv(TASK), make_system("react", "arithmetic"), original.history, t, wrong, 80
    )
    new = result.episode.history
    assert new[:t] == original.history[:t]
    assert new[t].tool_args == {"expression": "1 + 1"} and new[t + 1].content == "2"
    assert not result.episode.verdict.success  # the error propagated to the answer


def test_nondeterministic_environment_is_detected_as_drift() -> None:
    recorded = run_episode(DriftingEnv(TASK), make_system("react", "arithmetic"), 80).history
    t = max(s.step for s in recorded if s.is_agent_step)
    result = warm_start(
        DriftingEnv(TASK),
        make_system("react", "arithmetic"),
        recorded,
        t,
        recorded[t].as_action(),
        80,
    )
    assert not result.fidelity.exact
    first = _observations(recorded)[0]
    assert result.fidelity.first_mismatch_step == first  # the first calculator observation
    assert result.episode.end_reason.startswith("prefix drift")


def test_tampered_record_is_detected() -> None:
    original = _record("react")
    history = list(original.history)
    k = _observations(history)[1]
    history[k] = dataclasses.replace(history[k], content="999")
    t = len(history) - 1
    result = warm_start(
        ArithmeticEnv(TASK),
        make_system("react", "arithmetic"),
        history,
        t,
        history[t].as_action(),
        80,
    )
    assert result.fidelity.first_mismatch_step == k and not result.fidelity.exact


def test_step_must_be_an_agent_step() -> None:
    original = _record("react")
    obs = _observations(original.history)[0]
    with pytest.raises(WhowhenError, match="not an agent step"):
        warm_start(
            ArithmeticEnv(TASK),
            make_system("react", "arithmetic"),
            original.history,
            obs,
            original.history[obs - 1].as_action(),
            80,
        )
    with pytest.raises(WhowhenError, match="actor"):
        warm_start(
            ArithmeticEnv(TASK),
            make_system("react", "arithmetic"),
            original.history,
            1,
            Action("someone_else", "x"),
            80,
        )


def test_policy_error_and_step_budget_end_the_episode_cleanly() -> None:
    class Broken:
        name, topology, policy, agents = "broken", "single", "scripted", ("a",)

        def next_action(self, history):
            raise RuntimeError("boom")

    class Chatty(Broken):
        def next_action(self, history):
            return Action("a", "still thinking")

    assert run_episode(ArithmeticEnv(TASK), Broken(), 10).end_reason.startswith("error")
    episode = run_episode(ArithmeticEnv(TASK), Chatty(), 10)
    assert episode.end_reason == "max_steps" and len(episode.history) == 10
    assert not episode.verdict.success


def test_steps_roundtrip_through_the_table() -> None:
    import polars as pl

    episode = _record()
    frame = pl.from_arrow(to_arrow(step_rows(episode, "r1"), STEPS))
    assert steps_from_frame(frame) == episode.history


def test_a_warm_start_keeps_the_recorded_costs_so_none_marks_the_injection_point() -> None:
    """A model-played run's steps all cost something: the replayed prefix keeps the
    recorded costs (read back from the steps table) and the injected step takes the cost
    of the step it replaces; a free injected step after a free prefix would be the
    boundary that gives the gold step away."""
    original = _record("react")
    priced = [
        dataclasses.replace(s, cost=StepCost(100 + s.step, 7, 0.01, 0.5)) if s.is_agent_step else s
        for s in original.history
    ]
    table = pl.from_arrow(to_arrow(step_rows(Episode(history=priced), "r"), STEPS))
    recorded = steps_from_frame(table)
    assert [s.cost for s in recorded] == [s.cost for s in priced]
    t = _observations(recorded)[1] - 1
    wrong = Action("assistant", "", "calculator", {"expression": "1 + 1"})
    result = warm_start(
        ArithmeticEnv(TASK), make_system("react", "arithmetic"), recorded, t, wrong, 80
    )
    new = result.episode.history
    assert [s.cost for s in new[:t]] == [s.cost for s in priced[:t]]
    assert new[t].cost == priced[t].cost and new[t].tool_args == wrong.tool_args
