"""Counterfactual replay of natural failures, the offline mode classifier, and the
summaries built from them (checks against the slip log, candidate modes, calibration)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import polars as pl

from whowhen.assembly import make_system
from whowhen.benchmarks.arithmetic.actions import parse_calc
from whowhen.benchmarks.arithmetic.env import ArithmeticEnv
from whowhen.benchmarks.arithmetic.operators import wrong_operand
from whowhen.injection.plan import plan_injections
from whowhen.operators import random_slip
from whowhen.registry import get_benchmark
from whowhen.replay import classify, replay_failures, replay_run
from whowhen.rollouts import run_rollouts
from whowhen.runtime import Action, Step, run_episode, warm_start
from whowhen.runtime.records import steps_from_frame
from whowhen.taxonomy import load_taxonomy
from whowhen.taxonomy.overview import agreement, replay_check
from whowhen.taxonomy.propose import propose_modes

from .conftest import ROOT
from .helpers import drifting_arithmetic

BENCH = {"n_tasks": 40, "min_ops": 3, "max_ops": 5}


class SlipAt:
    """The arithmetic ReAct agent, erring exactly at the given history lengths."""

    name, topology, policy, agents = "react", "single", "scripted", ("assistant",)

    def __init__(self, at: dict[int, str]) -> None:
        self.at, self.inner = at, make_system("react", "arithmetic")

    def next_action(self, history: Sequence[Step]) -> Action:
        action = self.inner.next_action(history)
        how = self.at.get(len(history))
        if how == "note":  # harmless: the same calculation, said differently
            return dataclasses.replace(action, content=action.content + " Let me be careful.")
        if how == "operand":
            import random

            return wrong_operand(action, random.Random(len(history))) or action
        return action


def _run(at: dict[int, str]) -> tuple[list[Step], object]:
    task = get_benchmark("arithmetic").make_tasks(BENCH, 1)[0]
    episode = run_episode(ArithmeticEnv(task), SlipAt(at), 60)
    return episode.history, task


def _calculations() -> list[int]:
    """Indices of the reference run's operation steps (the run opens with a plan and has
    re-checks and notes between operations)."""
    history, _ = _run({})
    return [s.step for s in history if parse_calc(s) is not None]


FIRST, THIRD = _calculations()[0], _calculations()[2]


def test_replay_blames_the_decisive_slip_not_an_earlier_harmless_one() -> None:
    history, task = _run({FIRST: "note", THIRD: "operand"})
    assert not ArithmeticEnv(task).score(history[-1].tool_args["answer"], task.answer)
    replay = replay_run(
        history,
        lambda: ArithmeticEnv(task),
        make_system("react", "arithmetic"),
        lambda: SlipAt({FIRST: "note", THIRD: "operand"}),
        max_probes=10,
        max_steps=60,
    )
    assert replay.status == "decisive"
    probes = [(p.step, p.outcome) for p in replay.probes]
    assert probes == [(FIRST, "still_failed"), (THIRD, "flipped")]
    hit = replay.decisive
    assert hit.recorded == history[THIRD].as_action() and hit.corrected != hit.recorded
    assert hit.replayed_steps == THIRD and hit.n_steps > THIRD


def test_probe_cap_and_no_single_decisive_step() -> None:
    history, task = _run({FIRST: "note", THIRD: "operand"})
    capped = replay_run(
        history,
        lambda: ArithmeticEnv(task),
        make_system("react", "arithmetic"),
        lambda: SlipAt({FIRST: "note", THIRD: "operand"}),
        max_probes=1,
        max_steps=60,
    )
    assert capped.status == "no_single_decisive_step" and "cap" in capped.reason
    # an agent that errs again after any correction: no single correction flips the run
    stubborn = replay_run(
        history,
        lambda: ArithmeticEnv(task),
        make_system("react", "arithmetic"),
        lambda: SlipAt({n: "operand" for n in range(1, 60)}),
        max_probes=10,
        max_steps=60,
    )
    assert stubborn.status == "no_single_decisive_step"
    assert stubborn.reason == "no single correction flips the outcome"
    assert {p.outcome for p in stubborn.probes} == {"still_failed"}


def test_drifting_environment_is_a_fidelity_error_not_a_label(monkeypatch) -> None:
    runs, steps, _ = run_rollouts("arithmetic", "react", BENCH, 4, 0.15, 60)
    drifting_arithmetic(monkeypatch)
    _, decisive = replay_failures(runs, steps, BENCH, 4, 0.15, 10, 60)
    late = decisive.filter(pl.col("n_probes") > 0)
    assert late.height > 0
    # a probe whose prefix holds a calculator observation sees the drift: nothing past
    # step 2 is ever labelled decisive
    found = late.filter(pl.col("status") == "decisive")
    assert (found["decisive_step"] <= 2).all()
    bad = late.filter(pl.col("status") == "fidelity_error")
    assert bad.height > 0 and bad["decisive_step"].is_null().all()
    assert bad["reason"].str.contains("no longer replays").all()


def test_one_slip_failures_are_found_or_the_continuation_slipped_again() -> None:
    """The acceptance property, checked run by run: for a failure with exactly one logged
    slip, replay names that slip's step, unless the corrected continuation (the same agent
    with the same slip model) slipped again."""
    for bench, system in [("arithmetic", "react"), ("doc_qa", "react"), ("web_shop", "react")]:
        cfg = {"n_tasks": 40}
        runs, steps, slips = run_rollouts(bench, system, cfg, 7, 0.08, 60)
        probes, decisive = replay_failures(runs, steps, cfg, 7, 0.08, 20, 80)
        one = slips.group_by("run_id").agg(pl.len().alias("n"), pl.col("step").first())
        one = one.filter(pl.col("n") == 1)
        joined = decisive.join(one, on="run_id")
        assert joined.height > 0, bench
        tasks = {t.task_id: t for t in get_benchmark(bench).make_tasks(cfg, 7)}
        for row in joined.iter_rows(named=True):
            if row["decisive_step"] == row["step"]:
                continue
            run = runs.filter(pl.col("run_id") == row["run_id"]).row(0, named=True)
            probe = probes.filter(
                (pl.col("run_id") == row["run_id"]) & (pl.col("step") == row["step"])
            ).row(0, named=True)
            agent = make_system(system, bench, slip_rate=0.08, seed=7, slip=random_slip)
            recorded = steps_from_frame(steps.filter(pl.col("run_id") == row["run_id"]))
            result = warm_start(
                get_benchmark(bench).make_env(tasks[run["task_id"]]),
                agent,
                recorded,
                row["step"],
                Action.from_json(probe["corrected_action"]),
                80,
            )
            assert not result.episode.verdict.success and agent.slips, row


def _act(actor: str, content: str, tool: str | None = None, **args: object) -> Action:
    return Action(actor, content, tool, dict(args) if tool else None)


def test_classifier_rules() -> None:
    obs = [Step(0, "user", "message", "task"), Step(2, "read_chart", "observation", "A 46, B 89")]
    calc = "Next, subtract 9 from the running total of 84."
    cases = [
        (
            _act("a", calc, "calculator", expression="48 - 9"),
            _act("a", calc, "calculator", expression="84 - 9"),
            "action.wrong_tool_argument",
        ),
        (
            _act("a", calc.replace("subtract", "add"), "calculator", expression="84 + 9"),
            _act("a", calc, "calculator", expression="84 - 9"),
            "reasoning.wrong_operator",
        ),
        (
            _act("a", "A is 64.", "calculator", expression="(64 - 89)"),
            _act("a", "A is 46.", "calculator", expression="(46 - 89)"),
            "perception.misread_value",
        ),
        (
            _act("verifier", "All checks pass.", "final_answer", answer="5"),
            _act("verifier", "To solver: Check failed at step 3. Please redo."),
            "verification.false_approval",
        ),
        (
            _act("a", "I will add it to the cart.", "checkout"),
            _act("a", "I will add it to the cart.", "add_to_cart"),
            "action.wrong_tool",
        ),
        (
            _act("a", "Done; I will answer.", "final_answer", answer="3"),
            _act("a", "Next, add 2.", "calculator", expression="1 + 2"),
            "planning.premature_finish",
        ),
        (
            _act("o", "To verifier: the city is Lyon. Candidate answer: Lyon."),
            _act("o", "To researcher: the city is Lyon. Find the country of Lyon."),
            "planning.wrong_subgoal",
        ),
        (
            _act("w", "To orchestrator: red (1, 2), blue (3, 4)."),
            _act("w", "To orchestrator: blue (1, 2), red (3, 4)."),
            "perception.misidentified_object",
        ),
        (
            _act("w", "To orchestrator: the founder of X is Ann Weiss."),
            _act("w", "To orchestrator: the founder of X is Ann Novak."),
            "coordination.distorted_handoff",
        ),
        (
            _act("c", "Fixed.", "write_code", code="def f(x):\n    return x + 2"),
            _act("c", "Fixed.", "write_code", code="def f(x):\n    return x + 1"),
            "reasoning.logic_bug",
        ),
    ]
    for wrong, right, mode in cases:
        assert classify(wrong, right, obs) == mode, (wrong, mode)
    said = Step(3, "coder", "message", "To tester: ready.")
    again = _act("coder", "To tester: ready.")
    assert classify(again, _act("coder", "", "write_code", code="x"), [said]) == (
        "coordination.ignored_message"
    )


def test_checks_against_the_slip_log_and_candidates() -> None:
    decisive = pl.DataFrame(
        {
            "run_id": ["r1", "r2", "r3", "r4"],
            "benchmark": ["b"] * 4,
            "system": ["s"] * 4,
            "status": ["decisive", "decisive", "no_single_decisive_step", "decisive"],
            "decisive_step": [3, 5, None, 7],
            "mode": ["reasoning.x", "action.y", None, None],
            "description": [None, None, None, "a odd thing 12"],
        }
    )
    slips = pl.DataFrame(
        {
            "run_id": ["r1", "r2", "r2", "r3", "r4"],
            "step": [3, 1, 5, 2, 7],
            "mode": ["reasoning.x", "action.z", "action.w", "planning.q", "reasoning.v"],
        }
    )
    probes = pl.DataFrame({"run_id": ["r1", "r2", "r2", "r3"], "step": [3, 1, 5, 2]})
    check = replay_check(decisive, slips, probes).filter(pl.col("benchmark") == "all")
    row = check.row(0, named=True)
    assert (row["n_failed"], row["n_decisive"], row["n_one_slip"]) == (4, 3, 3)
    assert row["n_one_slip_found"] == 2 and row["probes"] == 4
    agree = {r["category"]: (r["n"], r["agree"]) for r in agreement(decisive, slips).to_dicts()}
    assert agree == {"reasoning": (2, 1), "action": (1, 0), "all": (3, 1)}
    more = pl.concat(
        [
            decisive,
            decisive.filter(pl.col("run_id") == "r4").with_columns(
                pl.lit("r5").alias("run_id"), pl.lit("a odd thing 99").alias("description")
            ),
        ]
    )
    cands = propose_modes(more)
    assert cands["size"].to_list() == [2] and cands["run_ids"].to_list() == [["r4", "r5"]]
    assert propose_modes(decisive).height == 0  # a single oddity is not a candidate


def test_injection_follows_the_natural_mode_mix() -> None:
    runs, steps, _ = run_rollouts("arithmetic", "react", BENCH, 1, 0.0, 60)
    tax = load_taxonomy(ROOT / "config" / "taxonomy.yaml")
    uniform = plan_injections(runs, steps, tax, 3, 2)
    heavy = plan_injections(
        runs, steps, tax, 3, 2, weights={("arithmetic", "react"): {"reasoning.wrong_operator": 50}}
    )

    def share(plan: pl.DataFrame) -> float:
        calc = plan.filter(pl.col("action_type") == "calculator")
        return (calc["mode"] == "reasoning.wrong_operator").mean()

    # calculator steps include re-checks, undo checks and retries, where wrong_operator does
    # not apply: the weight moves the draws at the operation steps, not at those
    assert share(heavy) > 0.6 and share(uniform) < 0.3


def test_rare_modes_are_topped_up_to_the_quota() -> None:
    """A verifier's send-back is rare, and false_approval there ends the run (the terminal
    share keeps such injections rare): without the top-up it barely appears in a plan."""
    runs, steps, _ = run_rollouts("arithmetic", "solver_verifier", BENCH, 1, 0.0, 240)
    tax = load_taxonomy(ROOT / "config" / "taxonomy.yaml")
    args = (runs, steps, tax, 3, 4)
    kw = {"step_selection": "spread", "terminal_share": 0.15}
    plain = plan_injections(*args, **kw)
    topped = plan_injections(*args, **kw, min_per_mode=8)
    count = lambda p, m: (p["mode"] == m).sum()  # noqa: E731
    assert count(plain, "verification.false_approval") < 8
    assert count(topped, "verification.false_approval") >= 8
    # the main plan is untouched, and no step of a run is injected twice
    assert set(plain["injection_id"]) <= set(topped["injection_id"])
    assert topped.select("parent_run_id", "step").is_duplicated().sum() == 0
    ends = topped.filter(pl.col("replacement_action").str.contains('"tool":"final_answer"'))
    assert ends.height > 0 and ends["parent_run_id"].is_duplicated().sum() == 0
    assert plan_injections(*args, **kw, min_per_mode=8).equals(topped)  # seeded
