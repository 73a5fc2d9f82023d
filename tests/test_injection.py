from __future__ import annotations

import json
import random

import polars as pl
import pytest

from whowhen import slips
from whowhen.benchmarks.arithmetic.actions import calc_action, parse_calc
from whowhen.injection.plan import plan_injections, spread_order
from whowhen.operators import OPERATORS
from whowhen.rollouts import run_rollouts
from whowhen.runtime import Action
from whowhen.slips import typo
from whowhen.taxonomy import load_taxonomy
from whowhen.tools import final_action

from .conftest import MAX_STEPS, ROOT


@pytest.fixture(scope="module")
def rollouts():
    return run_rollouts("arithmetic", "solver_verifier", {"n_tasks": 8}, 1, 0.0, MAX_STEPS)[:2]


@pytest.fixture(scope="module")
def taxonomy():
    return load_taxonomy(ROOT / "config" / "taxonomy.yaml")


def test_every_taxonomy_mode_has_an_operator(taxonomy) -> None:
    assert {m.id for m in taxonomy.modes} == set(OPERATORS)


@pytest.mark.parametrize("seed", range(20))
def test_operators_change_the_action_and_keep_its_format(seed: int) -> None:
    rng = random.Random(seed)
    action = calc_action(
        "solver",
        rng.choice(["add", "sub", "mul", "div"]),
        str(rng.randint(10, 999)),
        str(rng.randint(2, 9)),
    )
    op, a, n, _ = parse_calc(action)
    operand = OPERATORS["reasoning.wrong_operand"](action, rng)
    assert parse_calc(operand)[0] == op and parse_calc(operand)[2] != n
    operator = OPERATORS["reasoning.wrong_operator"](action, rng)
    assert parse_calc(operator)[0] != op and parse_calc(operator)[2] == n
    arg = OPERATORS["action.wrong_tool_argument"](action, rng)
    w = parse_calc(arg)  # the mistyped total, stated and computed alike
    assert w[0] == op and w[2] == n and w[1] == w[3] != a
    for replaced in (operand, operator, arg):
        text = (replaced.content + json.dumps(replaced.tool_args)).lower()
        assert not any(w in text for w in ("inject", "error", "wrong", "mistake", "slip"))
        assert replaced.actor == action.actor and replaced.tool == action.tool


def test_final_answer_typo() -> None:
    final = final_action("verifier", "75", verified_steps=4)
    replaced = OPERATORS["action.wrong_tool_argument"](final, random.Random(1))
    wrong = replaced.tool_args["answer"]
    assert wrong != "75" and replaced == final_action("verifier", wrong, verified_steps=4)
    said = Action("verifier", "Final answer: 75.", "final_answer", {"answer": "75"})
    other = slips.wrong_final_answer(said, random.Random(1))
    assert other.content == f"Final answer: {other.tool_args['answer']}."
    # an answer that shows how it was reached (a tally) is its benchmark's operators' business
    tally = Action("assistant", "2 red, 3 blue: 5 in all.", "final_answer", {"answer": "5"})
    assert slips.wrong_final_answer(tally, random.Random(1)) is None
    assert OPERATORS["reasoning.wrong_operand"](final, random.Random(1)) is None


@pytest.mark.parametrize("number", ["75", "100", "5", "1234", "2.5"])
def test_typo_is_a_different_valid_number(number: str) -> None:
    for seed in range(10):
        out = typo(number, random.Random(seed))
        assert out != number and float(out) > 0


def test_plan_is_seeded_and_targets_agent_actions(rollouts, taxonomy) -> None:
    runs, steps = rollouts
    a = plan_injections(runs, steps, taxonomy, seed=3, per_run=2)
    assert a.equals(plan_injections(runs, steps, taxonomy, seed=3, per_run=2))
    assert not a.equals(plan_injections(runs, steps, taxonomy, seed=4, per_run=2))
    assert a.group_by("parent_run_id").len()["len"].max() <= 2
    joined = a.join(steps, left_on=["parent_run_id", "step"], right_on=["run_id", "step"])
    assert joined.height == a.height
    assert joined["kind"].is_in(["action", "message"]).all()  # agent steps, never inputs
    assert (joined["actor"] == joined["agent"]).all() and (joined["actor"] != "user").all()
    assert (joined["tool"].fill_null("message") == joined["action_type"]).all()
    assert a["injection_id"].n_unique() == a.height
    for row in a.iter_rows(named=True):
        assert taxonomy.mode(row["mode"]).category == row["category"]
        assert row["replacement_action"] != row["original_action"]


def test_plan_respects_mode_filter_and_skips_failed_runs(rollouts, taxonomy) -> None:
    runs, steps = rollouts
    only = plan_injections(runs, steps, taxonomy, 3, 3, modes=["reasoning.wrong_operator"])
    assert set(only["mode"]) == {"reasoning.wrong_operator"}
    failed = runs.with_columns(pl.lit(False).alias("success"))
    assert plan_injections(failed, steps, taxonomy, 3, 2).height == 0


def test_spread_order_takes_the_tenths_of_a_run_in_turn() -> None:
    agent_steps = list(range(1, 61, 2))  # 30 agent steps
    firsts = []
    for seed in range(200):
        rng = random.Random(seed)
        order = list(agent_steps)
        rng.shuffle(order)
        out = spread_order(order, agent_steps, rng)
        assert sorted(out) == agent_steps
        tenths = [10 * agent_steps.index(s) // 30 for s in out]
        assert len(set(tenths[:10])) == 10  # the first ten injections: ten different tenths
        firsts.append(tenths[0])
    counts = [firsts.count(t) for t in range(10)]
    assert min(counts) >= 8 and max(counts) <= 35  # the start is spread too (200 runs)


def test_terminal_injections_are_capped_per_run(taxonomy) -> None:
    runs, steps, _ = run_rollouts("arithmetic", "react", {"n_tasks": 8}, 1, 0.0, MAX_STEPS)

    def terminal(plan: pl.DataFrame) -> pl.Series:
        return plan["replacement_action"].map_elements(
            lambda a: json.loads(a)["tool"] in ("final_answer", "checkout"), return_dtype=pl.Boolean
        )

    free = plan_injections(runs, steps, taxonomy, 4, 8)
    uncapped = free.filter(terminal(free)).group_by("parent_run_id").len()
    assert uncapped["len"].max() > 1  # uncapped: a run takes several that end it
    none = plan_injections(runs, steps, taxonomy, 4, 8, terminal_share=0.0)
    assert terminal(none).sum() == 0 and none.height > 0
    some = plan_injections(runs, steps, taxonomy, 4, 8, terminal_share=0.5)
    per_run = some.filter(terminal(some)).group_by("parent_run_id").len()
    assert per_run.height > 0 and per_run["len"].max() == 1
