from __future__ import annotations

import dataclasses
import inspect
import random

import pytest

from whowhen.assembly import make_system
from whowhen.benchmarks.chart_qa.actions import CHART_LEAD, answer_action, calc_action, parse_values
from whowhen.benchmarks.chart_qa.env import ChartQAEnv
from whowhen.benchmarks.chart_qa.goals import goal_in
from whowhen.benchmarks.chart_qa.operators import OPERATORS as CHART_OPERATORS
from whowhen.benchmarks.chart_qa.prompts import PROMPTS
from whowhen.benchmarks.chart_qa.render import chart_png, read_bar_values, render_chart
from whowhen.benchmarks.chart_qa.tasks import (
    KINDS,
    generate_tasks,
    make_tasks,
    parse_task,
    task_text,
    trend_of,
)
from whowhen.media import load_bytes, load_rgb, png_bytes
from whowhen.operators import OPERATORS, random_slip
from whowhen.runtime import Action, run_episode, warm_start
from whowhen.taxonomy import load_taxonomy

from .conftest import MAX_STEPS, ROOT
from .operator_checks import valid_for_env

SYSTEMS = ("react", "orchestrator")
REJECTED = "To orchestrator: Check failed"


def tasks(n: int = 40) -> list:
    """The test tasks; generated (memoized) inside each test, so their images go to that
    test's media store and nothing is rendered at import time."""
    return generate_tasks(n, seed=2)


def _episode(task, system: str = "react"):
    return run_episode(ChartQAEnv(task), make_system(system, "chart_qa"), MAX_STEPS)


def test_tasks_are_seeded_with_identical_media() -> None:
    again = generate_tasks(40, seed=2)
    assert again == tasks() and generate_tasks(40, seed=3) != tasks()
    assert make_tasks({"n_tasks": 40}, 2) == tasks()
    assert {t.kind for t in tasks()} == set(KINDS)
    task = tasks()[0]
    fresh = png_bytes(render_chart(task.values, task.categories, task.colour, task.ymax))
    assert load_bytes(task.media[0]) == fresh  # byte-identical on a fresh render
    for task in tasks():
        info = parse_task(task_text(task))
        assert (info.categories, info.kind, info.pair, info.ymax) == (
            task.categories,
            task.kind,
            task.pair,
            task.ymax,
        )
        assert 8 <= len(task.values) <= 12 and len(set(task.values)) == len(task.values)
        if task.kind == "trend":
            assert task.answer == trend_of(task.values)


def test_media_survive_a_new_store(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WHOWHEN_MEDIA_DIR", str(tmp_path))  # make_tasks is memoized
    env = ChartQAEnv(tasks()[1])
    env.reset()
    assert (tmp_path / tasks()[1].media[0][:2] / tasks()[1].media[0]).exists()


@pytest.mark.parametrize("ymax", [100, 50])
def test_read_chart_reads_the_pixels_exactly(ymax: int) -> None:
    for task in tasks() if ymax == 100 else generate_tasks(30, seed=4, ymax=ymax):
        assert read_bar_values(load_rgb(task.media[0]), task.ymax) == list(task.values)
        # the tool sees only the image: hidden values changed, the reading is the same
        blind = dataclasses.replace(task, values=(0,) * len(task.values))
        env = ChartQAEnv(blind)
        env.reset()
        out = env.step(Action("a", "", "read_chart", {}))[1]
        read = parse_values(out)
        assert read is not None
        assert read[1] == list(zip(task.categories, task.values, strict=True))


def test_tool_errors_are_observations() -> None:
    env = ChartQAEnv(tasks()[0])
    env.reset()
    assert env.step(Action("a", "", "read_chart", {"image": "nope.png"}))[1].startswith("Error:")
    assert env.step(Action("a", "", "calculator", {"expression": "2 +"}))[1].startswith("Error:")
    assert env.step(Action("a", "", "calculator", {"expression": "(64 - 31)"}))[1] == "33"
    assert chart_png.cache_info().hits > 0  # resets reuse the rendered bytes


def test_evaluator_relaxed_numbers_exact_words() -> None:
    score = ChartQAEnv.score
    assert score("33", "33") and score("The answer is 34", "33")  # within 5%
    assert not score("36", "33") and not score(None, "33")
    assert score(" lyon ", "Lyon") and not score("Graz", "Lyon")
    assert score("Rise", "rise") and not score("fall", "rise")


@pytest.mark.parametrize("system", SYSTEMS)
def test_reference_policies_solve_every_task(system: str) -> None:
    for task in tasks():
        episode = _episode(task, system)
        assert episode.verdict.success, (task.question, episode.end_reason)
        assert episode.end_reason == "done"
    assert set(PROMPTS[system]) == set(make_system(system, "chart_qa").agents)


def _wording(text: str) -> tuple[bool, ...]:
    """Which kind of reasoning a step's text states (an operator must keep it)."""
    return tuple(w in text for w in ("highest value is", "lowest value is", "From left to right "))


def _own(mode: str, action: Action, rng: random.Random, history=()) -> Action | None:
    """This benchmark's operator for `mode` (with the history where it reads one)."""
    op = CHART_OPERATORS[mode]
    return (
        op(action, rng, history) if len(inspect.signature(op).parameters) > 2 else op(action, rng)
    )


def _applicable(history, mode: str) -> list[int]:
    return [
        s.step
        for s in history
        if s.is_agent_step and _own(mode, s.as_action(), random.Random(0), history[: s.step])
    ]


MARKERS = ("inject", "error", "wrong", "mistake", "slip", "oops")
FINISHING = {"planning.premature_finish", "verification.false_approval"}


def _check_replacement(wrong: Action | None, original: Action, system: str) -> Action:
    """A replacement that differs, is valid for the environment and carries no marker."""
    assert wrong is not None and wrong != original and wrong.actor == original.actor
    assert valid_for_env(wrong, "chart_qa", system)
    assert not any(w in wrong.content.lower() for w in MARKERS), wrong.content
    return wrong


@pytest.mark.parametrize("system", SYSTEMS)
def test_operators_give_different_valid_actions(system: str) -> None:
    seen = set()
    for task in tasks()[:12]:
        history = _episode(task, system).history
        for mode in CHART_OPERATORS:
            for t in _applicable(history, mode):
                seen.add(mode)
                original = history[t].as_action()
                for seed in range(5):
                    wrong = OPERATORS[mode](original, random.Random(seed), history[:t])
                    _check_replacement(wrong, original, system)
                    if mode not in FINISHING:  # finishing early may change the tool
                        assert wrong.tool == original.tool
                    assert (
                        parse_values(wrong.content)
                        or wrong.tool in ("final_answer", "read_chart")
                        or goal_in(wrong.content)  # a question restated
                    )
                    if mode != "coordination.distorted_handoff":  # may restate the question
                        assert _wording(wrong.content) == _wording(original.content)
                    if wrong.tool == "calculator":
                        assert wrong.tool_args["expression"].startswith("(")
    # a false approval needs a rejection, which a run without slips never has
    never = {"verification.false_approval"}
    if system == "react":
        never.add("coordination.distorted_handoff")
    assert seen == set(CHART_OPERATORS) - never


def test_operators_ignore_other_actions() -> None:
    foreign = [
        Action("a", "I will read the chart.", "read_chart", {}),
        Action("a", "Final answer: 3.", "final_answer", {"answer": "3"}),
        Action(
            "solver",
            "Next, add 3 to the running total of 4.",
            "calculator",
            {"expression": "4 + 3"},
        ),
        Action("verifier", "To solver: step 2 uses the wrong operation; please redo it."),
        Action("a", "I see 4 red squares. The answer is 4.", "final_answer", {"answer": "4"}),
    ]
    history = _episode(tasks()[2], "orchestrator").history
    for mode in CHART_OPERATORS:
        for action in foreign:
            assert _own(mode, action, random.Random(0), history) is None, (mode, action)


def test_core_calculator_operators_keep_the_chart_wording() -> None:
    # the arithmetic operators expect `a op b` and rewrite in their own template; the
    # chart policies write `(a - b)`, so only the chart operators apply to them
    values = [("Lyon", 64), ("Graz", 31), ("Porto", 58)]
    action = calc_action("assistant", CHART_LEAD, values, "Lyon", "Graz")
    rng = random.Random(0)
    assert OPERATORS["reasoning.wrong_operand"](action, rng) is None
    swapped = OPERATORS["reasoning.wrong_operator"](action, rng)
    assert swapped.content.startswith(CHART_LEAD) and "running total" not in swapped.content
    assert swapped.tool_args["expression"] == "(31 - 64)"
    # dropped for chart QA: a mistyped operand would contradict the stated one
    assert OPERATORS["action.wrong_tool_argument"](action, rng) is None
    misread = OPERATORS["perception.misread_value"](action, rng)
    assert misread.content.startswith(CHART_LEAD) and "running total" not in misread.content


def _first_failure(system: str, mode: str, kinds: tuple[str, ...], actor: str):
    """(result, recorded) of the first injection of `mode` at an `actor` step that fails."""
    policy = make_system(system, "chart_qa")
    for task in (t for t in tasks() if t.kind in kinds):
        recorded = _episode(task, system).history
        for t in _applicable(recorded, mode):
            if recorded[t].actor != actor:
                continue
            for seed in range(6):
                wrong = OPERATORS[mode](recorded[t].as_action(), random.Random(seed), recorded[:t])
                result = warm_start(ChartQAEnv(task), policy, recorded, t, wrong, MAX_STEPS)
                assert result.fidelity.exact
                if not result.episode.verdict.success:
                    return result, recorded
    return None, None


@pytest.mark.parametrize(
    ("system", "mode", "kinds", "actor"),
    [
        ("react", "perception.misread_value", ("diff",), "assistant"),
        ("react", "perception.misread_value", ("max", "min", "trend"), "assistant"),
        ("orchestrator", "coordination.distorted_handoff", ("diff", "max"), "reader"),
        ("orchestrator", "perception.misread_value", ("diff", "min"), "reader"),
        ("react", "perception.misidentified_object", ("max", "min"), "assistant"),
        ("react", "perception.misidentified_object", ("diff",), "assistant"),
        ("orchestrator", "perception.misidentified_object", ("max", "diff"), "reader"),
        ("react", "reasoning.wrong_operator", ("diff",), "assistant"),
        ("orchestrator", "reasoning.wrong_operator", ("diff",), "analyst"),
        ("react", "planning.premature_finish", ("diff",), "assistant"),
        # the reading steps, the question each message restates
        ("react", "planning.premature_finish", ("max", "min"), "assistant"),
        ("orchestrator", "planning.premature_finish", ("max", "min"), "reader"),
        ("orchestrator", "coordination.distorted_handoff", KINDS, "orchestrator"),
        ("orchestrator", "coordination.distorted_handoff", ("max", "trend"), "analyst"),
        ("orchestrator", "coordination.distorted_handoff", ("min", "trend"), "verifier"),
        ("react", "perception.misread_value", ("trend",), "assistant"),
    ],
)
def test_injected_errors_propagate_to_failure(
    system: str, mode: str, kinds: tuple[str, ...], actor: str
) -> None:
    result, _ = _first_failure(system, mode, kinds, actor)
    assert result is not None, f"no failing injection of {mode}"
    assert result.episode.end_reason == "done"


def test_verifier_catches_an_analyst_slip() -> None:
    system = make_system("orchestrator", "chart_qa")
    task = next(t for t in tasks() if t.kind == "diff")
    recorded = _episode(task, "orchestrator").history
    t = next(s.step for s in recorded if s.actor == "analyst" and s.tool == "calculator")
    wrong = OPERATORS["perception.misread_value"](recorded[t].as_action(), random.Random(1))
    result = warm_start(ChartQAEnv(task), system, recorded, t, wrong, MAX_STEPS)
    assert result.fidelity.exact and result.episode.verdict.success  # a recovery
    assert any(
        s.actor == "verifier" and s.content.startswith("To orchestrator: Check failed")
        for s in result.episode.history
    )


@pytest.mark.parametrize("system", SYSTEMS)
def test_slip_model_at_rate_one_fails_without_crashing(system: str) -> None:
    failures = 0
    for seed, task in enumerate(tasks()[:12]):
        policy = make_system(system, "chart_qa", slip_rate=1.0, seed=seed, slip=random_slip)
        episode = run_episode(ChartQAEnv(task), policy, MAX_STEPS)
        assert not episode.end_reason.startswith("error"), episode.end_reason
        failures += not episode.verdict.success
        assert policy.slips
    assert failures >= 3  # relaxed scoring forgives a few small misreads


def test_new_operators_read_like_the_policy() -> None:
    values = [("Lyon", 64), ("Graz", 31), ("Porto", 58)]
    calc = calc_action("assistant", CHART_LEAD, values, "Lyon", "Graz")
    for seed in range(10):
        rng = random.Random(seed)
        swapped = _check_replacement(_own("reasoning.wrong_operator", calc, rng), calc, "react")
        assert swapped.content == (
            "The chart reads Lyon 64, Graz 31, Porto 58. Graz minus Lyon is 31 - 64."
        )
        early = _check_replacement(_own("planning.premature_finish", calc, rng), calc, "react")
        assert early.tool == "final_answer" and early.tool_args["answer"] in ("64", "31")
        assert early.content.endswith(f"The answer is {early.tool_args['answer']}.")
        other = _check_replacement(
            _own("perception.misidentified_object", calc, rng), calc, "react"
        )
        read = dict(parse_values(other.content)[1])  # two neighbouring bars exchanged
        assert sorted(read.values()) == sorted(dict(values).values()) and read != dict(values)
    top = answer_action("assistant", CHART_LEAD, values, "max")
    other = _own("perception.misidentified_object", top, random.Random(0))
    assert _check_replacement(other, top, "react").tool_args == {"answer": "Graz"}
    assert "The highest value is Graz's 64." in other.content


def test_false_approval_answers_the_rejected_proposal() -> None:
    """An analyst slip the verifier caught: approving instead ends with the wrong answer."""
    system = make_system("orchestrator", "chart_qa")
    op = CHART_OPERATORS["verification.false_approval"]
    task = next(t for t in tasks() if t.kind == "diff")
    recorded = _episode(task, "orchestrator").history
    t = next(s.step for s in recorded if s.actor == "analyst" and s.tool == "calculator")
    wrong = OPERATORS["perception.misread_value"](
        recorded[t].as_action(), random.Random(2)
    )  # a misread the relaxed scoring does not forgive
    history = warm_start(ChartQAEnv(task), system, recorded, t, wrong, 60).episode.history
    reject = next(s for s in history if s.content.startswith("To orchestrator: Check failed"))
    before = history[: reject.step]
    approval = _check_replacement(
        op(reject.as_action(), random.Random(0), before), reject.as_action(), "orchestrator"
    )
    proposed = [s for s in before if s.actor == "analyst" and s.kind == "message"][-1]
    answer = approval.tool_args["answer"]
    assert approval.tool == "final_answer" and proposed.content.endswith(f"answer: {answer}.")
    assert approval.content == recorded[-1].content.replace(  # the approval's own wording
        f"Final answer: {recorded[-1].tool_args['answer']}.", f"Final answer: {answer}."
    )
    result = warm_start(ChartQAEnv(task), system, history, reject.step, approval, MAX_STEPS)
    assert result.fidelity.exact and not result.episode.verdict.success
    assert op(reject.as_action(), random.Random(0), ()) is None  # no proposal to approve
    last = recorded[-1].as_action()  # the verifier's own approval: nothing to change
    assert op(last, random.Random(0), recorded[:-1]) is None


@pytest.mark.parametrize("system", SYSTEMS)
def test_most_agent_steps_can_take_a_plannable_error(system: str) -> None:
    """The kinds of gold steps follow the kinds of agent steps only if most steps
    (reading steps included) have a mode, among those the taxonomy allows for their action
    type, whose operator changes them. Left out by design: the overview, second
    measurements, a trend's or a difference's bars (a reading cut short there cannot change
    the answer), the verifier's final answer."""
    taxonomy = load_taxonomy(ROOT / "config" / "taxonomy.yaml")
    total = changed = reads = reads_changed = 0
    for task in tasks()[:16]:
        history = _episode(task, system).history
        for s in (s for s in history if s.is_agent_step):
            kind = s.tool or "message"
            modes = [m.id for m in taxonomy.modes if kind in m.action_types]
            ok = any(
                OPERATORS[m](s.as_action(), random.Random(0), history[: s.step])
                for m in modes
                if m in OPERATORS
            )
            total, changed = total + 1, changed + ok
            if s.tool == "read_chart" and task.kind in ("max", "min"):
                reads, reads_changed = reads + 1, reads_changed + ok
    assert changed / total >= 0.5, (changed, total)  # about 0.1 before the coherent operators
    assert reads_changed / reads >= 0.7, (reads_changed, reads)


def test_false_approval_of_an_estimate_ends_wrong() -> None:
    """The analyst's first go at a difference is, in some tasks, an estimate the verifier
    sends back: approving it instead is a false approval that decides the run."""
    system = make_system("orchestrator", "chart_qa")
    op = CHART_OPERATORS["verification.false_approval"]
    flipped = 0
    for task in (t for t in tasks() if t.kind == "diff"):
        recorded = _episode(task, "orchestrator").history
        reject = next((s for s in recorded if s.content.startswith(REJECTED)), None)
        if reject is None:
            continue
        assert any("is about" in s.content for s in recorded[: reject.step])
        approval = op(reject.as_action(), random.Random(0), recorded[: reject.step])
        approval = _check_replacement(approval, reject.as_action(), "orchestrator")
        result = warm_start(ChartQAEnv(task), system, recorded, reject.step, approval, MAX_STEPS)
        assert result.fidelity.exact
        flipped += not result.episode.verdict.success
    assert flipped >= 1
