"""The natural slip generator: each slip changes text and action together, applies only
where its precondition holds, is not what an injection operator writes, and gives natural
failures that replay attributes to the slipped step."""

from __future__ import annotations

import random

import polars as pl
import pytest

from whowhen.natural_slips import (
    early_answer,
    natural_slip,
    repeated_request,
    rounded_value,
    stale_value,
)
from whowhen.operators import OPERATORS, slip_model
from whowhen.replay.stage import replay_failures
from whowhen.rollouts import run_rollouts
from whowhen.runtime import Action, Step
from whowhen.taxonomy import load_taxonomy

from .conftest import MAX_STEPS, ROOT

TAXONOMY = {m.id for m in load_taxonomy(ROOT / "config" / "taxonomy.yaml").modes}


def _history(*observations: str) -> list[Step]:
    steps = [Step(0, "user", "message", "Problem: start with 12, then ...")]
    for text in observations:
        steps.append(Step(len(steps), "assistant", "action", "Computing.", "calculator", {}))
        steps.append(Step(len(steps), "calculator", "observation", text))
    return steps


def test_stale_value_carries_an_older_result_in_text_and_call() -> None:
    history = _history("55", "59")
    action = Action(
        "assistant",
        "Next, add 4 to the running total of 59.",
        "calculator",
        {"expression": "59 + 4"},
    )
    mode, slipped = stale_value(action, random.Random(0), history)
    assert mode == "reasoning.wrong_operand"
    assert slipped.tool_args == {"expression": "55 + 4"}
    assert slipped.content == "Next, add 4 to the running total of 55."
    assert stale_value(action, random.Random(0), _history("59")) is None  # nothing older


def test_rounded_value_is_believed() -> None:
    action = Action(
        "assistant", "I will multiply 1234 by 3.", "calculator", {"expression": "1234 * 3"}
    )
    mode, slipped = rounded_value(action, random.Random(0), _history("1234"))
    assert mode == "action.wrong_tool_argument"
    assert slipped.tool_args == {"expression": "1200 * 3"} and "1200" in slipped.content
    short = Action("assistant", "I will add 12.", "calculator", {"expression": "12 + 3"})
    assert rounded_value(short, random.Random(0), _history("12")) is None


def test_early_answer_only_for_a_lone_agent_with_results() -> None:
    action = Action("assistant", "Next, add 4.", "calculator", {"expression": "59 + 4"})
    mode, slipped = early_answer(action, random.Random(1), _history("55", "59"))
    assert mode == "planning.premature_finish"
    assert slipped.tool == "final_answer" and slipped.tool_args == {"answer": "59"}
    assert "59" in slipped.content
    assert early_answer(action, random.Random(1), _history("59")) is None
    solver = Action("solver", "Next, add 4.", "calculator", {"expression": "59 + 4"})
    assert early_answer(solver, random.Random(1), _history("55", "59")) is None


def test_repeated_request_ignores_the_answer() -> None:
    history = [
        Step(0, "user", "message", "Who founded Acme?"),
        Step(1, "orchestrator", "message", "To researcher: find the founder of Acme."),
        Step(2, "researcher", "message", "To orchestrator: the founder of Acme is Lena Weiss."),
    ]
    action = Action("orchestrator", "To researcher: find the birth city of Lena Weiss.")
    mode, slipped = repeated_request(action, random.Random(0), history)
    assert mode == "coordination.ignored_message"
    assert slipped.content == history[1].content
    assert repeated_request(action, random.Random(0), history[:2]) is None  # no answer yet


@pytest.mark.parametrize(
    ("benchmark", "system"),
    [("arithmetic", "react"), ("arithmetic", "solver_verifier"), ("doc_qa", "orchestrator")],
)
def test_natural_slips_differ_from_the_operators_and_use_taxonomy_modes(
    benchmark: str, system: str
) -> None:
    runs, steps, slips = run_rollouts(
        benchmark, system, {"n_tasks": 30}, 1, 0.1, MAX_STEPS, slip_kind="natural"
    )
    assert slips.height > 0 and (~runs["success"]).sum() > 0
    assert set(slips["mode"]) <= TAXONOMY
    by_run = {k[0]: g.sort("step") for k, g in steps.group_by("run_id")}
    same = 0
    for row in slips.iter_rows(named=True):
        original = Action.from_json(row["original_action"])
        slipped = Action.from_json(row["slipped_action"])
        history = [
            Step(r["step"], r["actor"], r["kind"], r["content"], r["tool"], None)
            for r in by_run[row["run_id"]]
            .filter(pl.col("step") < row["step"])
            .iter_rows(named=True)
        ]
        written = [
            OPERATORS[mode](original, random.Random(seed), history)
            for mode in OPERATORS
            for seed in range(5)
        ]
        same += slipped in written
    # an operator may write the same step by coincidence (a stale total 10 below the current
    # one is also a typo), but natural slips are not drawn from the operators
    assert same <= 0.25 * slips.height, (same, slips.height)


def test_replay_names_the_natural_slip_in_single_slip_failures() -> None:
    runs, steps, slips = run_rollouts(
        "arithmetic", "react", {"n_tasks": 40}, 3, 0.08, MAX_STEPS, slip_kind="natural"
    )
    _, decisive = replay_failures(
        runs, steps, {"n_tasks": 40}, 3, 0.08, 20, MAX_STEPS, slip_kind="natural"
    )
    one = slips.group_by("run_id").agg(pl.col("step").first(), pl.len()).filter(pl.col("len") == 1)
    found = decisive.join(one, on="run_id").filter(pl.col("status") == "decisive")
    assert found.height >= 3
    assert (found["decisive_step"] == found["step"]).mean() >= 0.8


def test_the_slip_models_by_name() -> None:
    assert slip_model("natural") is natural_slip
    assert slip_model("operators") is not natural_slip
