from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest

from whowhen import slips
from whowhen.assembly import make_system
from whowhen.benchmarks.visual_count.env import (
    REGIONS,
    VisualCountEnv,
    detect_objects,
    parse_detections,
)
from whowhen.benchmarks.visual_count.operators import OPERATORS as COUNT_OPERATORS
from whowhen.benchmarks.visual_count.phrases import CONFIRM_FORMS, PLAN_FORMS, RECHECK_FORMS
from whowhen.benchmarks.visual_count.policies import (
    answer_action,
    decide,
    parse_answer,
    parse_notes,
)
from whowhen.benchmarks.visual_count.prompts import PROMPTS
from whowhen.benchmarks.visual_count.tasks import (
    GAP,
    generate_tasks,
    make_tasks,
    parse_question,
    render_scene,
)
from whowhen.media import load_bytes, load_rgb, png_bytes
from whowhen.operators import OPERATORS, random_slip
from whowhen.runtime import Action, run_episode, warm_start

from .conftest import MAX_STEPS
from .operator_checks import valid_for_env


def tasks(n: int = 40) -> list:
    """The test tasks, generated (memoized) inside each test so their images go to that
    test's media store."""
    return generate_tasks(n, seed=2)


def _episode(task):
    return run_episode(VisualCountEnv(task), make_system("react", "visual_count"), MAX_STEPS)


def _apart(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return a[2] + GAP <= b[0] or b[2] + GAP <= a[0] or a[3] + GAP <= b[1] or b[3] + GAP <= a[1]


def test_scenes_are_seeded_and_well_formed() -> None:
    assert generate_tasks(40, seed=2) == tasks() and generate_tasks(40, seed=3) != tasks()
    assert make_tasks({"n_tasks": 40}, 2) == tasks()
    assert {t.shape is None for t in tasks()} == {True, False}
    for task in tasks():
        assert 5 <= len(task.objects) <= 15
        assert len({c for c, _, _ in task.objects}) <= 4
        boxes = [box for _, _, box in task.objects]
        assert all(_apart(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
        assert parse_question(task.question) == (task.colour, task.shape)
        assert int(task.answer) >= 1
    task = tasks()[0]
    assert load_bytes(task.media[0]) == png_bytes(render_scene(task.objects))


def test_detections_equal_the_generating_scenes() -> None:
    for task in tasks():
        found = detect_objects(load_rgb(task.media[0]))
        assert sorted(found) == sorted(task.objects)  # colour, shape and bounding box
        # through the tool, with the hidden scene removed from the task
        env = VisualCountEnv(dataclasses.replace(task, objects=()))
        env.reset()
        out = env.step(Action("a", "", "detect_objects", {}))[1]
        assert Counter(parse_detections(out)) == Counter((c, s) for c, s, _ in task.objects)


def test_tool_errors_and_evaluator() -> None:
    task = tasks()[0]
    env = VisualCountEnv(task)
    env.reset()
    assert env.step(Action("a", "", "detect_objects", {"image": "x.png"}))[1].startswith("Error:")
    env.step(Action("a", "", "final_answer", {"answer": f"There are {task.answer}."}))
    assert env.evaluate().success
    env.reset()
    env.step(Action("a", "", "final_answer", {"answer": str(int(task.answer) + 1)}))
    assert not env.evaluate().success


def test_reference_policy_solves_every_task() -> None:
    for task in tasks():
        episode = _episode(task)
        assert episode.verdict.success and episode.end_reason == "done", task.question
    assert set(PROMPTS["react"]) == {"assistant"}


def test_operators_change_the_count_plausibly() -> None:
    for task in tasks(20):
        final = _episode(task).history[-1].as_action()
        tally, colour, shape, count = parse_answer(final)
        for seed in range(5):
            rng = random.Random(seed)
            miscounted = OPERATORS["reasoning.miscount"](final, rng)
            assert abs(int(miscounted.tool_args["answer"]) - count) == 1
            assert parse_answer(miscounted)[1:3] == (colour, shape)
            other = OPERATORS["perception.misidentified_object"](final, rng)
            if other is None:  # every other class has the same count
                continue
            wrong = int(other.tool_args["answer"])
            relabelled = parse_answer(other)[0]  # two classes taken for each other
            assert wrong != count and sorted(relabelled.values()) == sorted(tally.values())
            if shape is None:
                totals = Counter()
                for (c, _), n in tally.items():
                    totals[c] += n
                assert wrong in {n for c, n in totals.items() if c != colour}
            else:
                assert wrong in {n for k, n in tally.items() if k != (colour, shape)}


def test_operators_ignore_other_actions() -> None:
    rng = random.Random(0)
    for op in COUNT_OPERATORS.values():
        assert op(Action("assistant", "Look.", "detect_objects", {}), rng) is None
        assert op(Action("a", "The answer is 3.", "final_answer", {"answer": "3"}), rng) is None
        assert op(Action("a", "To b: 3 red circles.", None, None), rng) is None


def test_misidentified_prefers_a_neighbouring_class() -> None:
    tally = {
        ("red", "circle"): 3,
        ("red", "square"): 1,
        ("blue", "circle"): 5,
        ("green", "triangle"): 2,
    }
    action = answer_action("assistant", tally, "red", "circle", 3)
    answers = {
        COUNT_OPERATORS["perception.misidentified_object"](action, random.Random(s)).tool_args[
            "answer"
        ]
        for s in range(20)
    }
    assert answers == {"1", "5"}  # red squares or blue circles, never the green triangles


@pytest.mark.parametrize("mode", ["reasoning.miscount", "perception.misidentified_object"])
def test_injected_error_propagates(mode: str) -> None:
    system = make_system("react", "visual_count")
    failed = 0
    for task in tasks(10):
        recorded = _episode(task).history
        t = len(recorded) - 1
        wrong = OPERATORS[mode](recorded[t].as_action(), random.Random(0))
        if wrong is None:
            continue
        result = warm_start(VisualCountEnv(task), system, recorded, t, wrong, MAX_STEPS)
        assert result.fidelity.exact and not result.episode.verdict.success
        failed += 1
    assert failed >= 5


def test_slip_model_at_rate_one_fails_without_crashing() -> None:
    failures = 0
    for seed, task in enumerate(tasks(12)):
        policy = make_system("react", "visual_count", slip_rate=1.0, seed=seed, slip=random_slip)
        episode = run_episode(VisualCountEnv(task), policy, MAX_STEPS)
        assert not episode.end_reason.startswith("error"), episode.end_reason
        failures += not episode.verdict.success
    assert failures >= 8  # the colour pass catches some slips in the region notes


MARKERS = ("inject", "error", "wrong", "mistake", "slip", "oops")


@pytest.mark.parametrize(
    "mode",
    ["reasoning.miscount", "perception.misidentified_object"],
)
def test_operators_give_valid_unmarked_answers(mode: str) -> None:
    """Each mode the coverage check needs applies to the answer step, and every replacement
    is a different final_answer the environment accepts, with no tell-tale words."""
    applied = 0
    for task in tasks(10):
        history = _episode(task).history
        final = history[-1].as_action()
        for seed in range(3):
            wrong = OPERATORS[mode](final, random.Random(seed), history[:-1])
            if wrong is None:  # a misidentification needs a class with another count
                continue
            applied += 1
            assert wrong != final and (wrong.actor, wrong.tool) == (final.actor, final.tool)
            assert valid_for_env(wrong, "visual_count", "react")
            assert wrong.tool_args["answer"] != final.tool_args["answer"]
            assert not any(w in wrong.content.lower() for w in MARKERS), wrong.content
    assert applied >= 10


def test_region_and_colour_passes_partition_the_scene() -> None:
    """Every object is centred in exactly one grid cell, and a colour pass lists exactly
    the objects of that colour; unknown regions and colours are errors."""
    for task in tasks(10):
        env = VisualCountEnv(task)
        env.reset()
        seen: Counter = Counter()
        for region in REGIONS:
            out = env.step(Action("a", "", "detect_objects", {"region": region}))[1]
            assert out.startswith(f"Region {region} ")
            seen.update(parse_detections(out))
        assert seen == Counter((c, s) for c, s, _ in task.objects)
        out = env.step(Action("a", "", "detect_objects", {"colour": task.colour}))[1]
        assert Counter(c for c, _ in parse_detections(out)) == Counter(
            {task.colour: sum(c == task.colour for c, _, _ in task.objects)}
        )
    for bad in ({"region": "north"}, {"colour": "pink"}):
        assert env.step(Action("a", "", "detect_objects", bad))[1].startswith("Error:")


def test_runs_scan_every_region_with_varied_wording() -> None:
    """A reference run notes every region once, and its steps are not one template."""
    texts = set()
    for task in tasks(20):
        history = _episode(task).history
        noted = [r for s in history if s.actor == "assistant" for r, _ in parse_notes(s.content)]
        assert sorted(set(noted)) == sorted(REGIONS)
        assert len([s for s in history if s.kind == "action"]) >= 12
        texts.add(history[1].content)
    assert len(texts) >= 3


def test_a_shape_misnoted_in_a_region_propagates() -> None:
    """A region note that takes the asked shape for another of the same colour survives
    the colour pass and gives a wrong answer."""
    system = make_system("react", "visual_count")
    flipped = 0
    for task in [t for t in tasks(20) if t.shape is not None][:6]:
        recorded = _episode(task).history
        for t, step in enumerate(recorded):
            if step.kind != "action" or not parse_notes(step.content):
                continue
            op = COUNT_OPERATORS["perception.misidentified_object"]
            wrong = op(step.as_action(), random.Random(0), recorded[:t])
            if wrong is None:
                continue
            result = warm_start(VisualCountEnv(task), system, recorded, t, wrong, MAX_STEPS)
            assert result.fidelity.exact
            flipped += not result.episode.verdict.success
            break
    assert flipped >= 3


def test_no_mistyped_answer_that_would_contradict_the_tally() -> None:
    """The generic mistyped-answer slip leaves an answer that shows its tally alone:
    rewriting the number there would make the step contradict itself."""
    for task in tasks(10):
        history = _episode(task).history
        final = history[-1].as_action()
        assert slips.wrong_final_answer(final, random.Random(0)) is None


def _step_kind(action: Action) -> str:
    """Which kind of step a reference detect step is (by its call and wording)."""
    args = action.tool_args or {}
    if not args:
        return "full"
    if "colour" in args:
        return "colour"
    if PLAN_FORMS.search(action.content):
        return "plan"
    if RECHECK_FORMS.search(action.content):
        return "recheck"
    return "confirm" if CONFIRM_FORMS.search(action.content) else "region"


def test_every_kind_of_step_can_take_a_decisive_error() -> None:
    """Every kind of detect step (the opening pass, the plan, a region note, a
    re-check, a second look's confirmation, the colour pass) is a place where an operator
    writes a coherent error that carries to the answer, at a similar rate."""
    system = make_system("react", "visual_count")
    op = COUNT_OPERATORS["perception.misidentified_object"]
    tried: Counter = Counter()
    flipped: Counter = Counter()
    for task in tasks(14):
        recorded = _episode(task).history
        for t, step in enumerate(recorded[:-1]):
            if step.kind != "action":
                continue
            kind = _step_kind(step.as_action())
            wrong = op(step.as_action(), random.Random(t), recorded[:t])
            assert wrong is not None and wrong != step.as_action(), (kind, step.content)
            result = warm_start(VisualCountEnv(task), system, recorded, t, wrong, MAX_STEPS)
            assert result.fidelity.exact
            tried[kind] += 1
            flipped[kind] += not result.episode.verdict.success
    assert set(tried) == {"full", "plan", "region", "recheck", "confirm", "colour"}
    rates = {k: flipped[k] / tried[k] for k in tried}
    assert all(rate >= 0.8 for rate in rates.values()), rates
    assert sum(flipped.values()) >= 0.9 * sum(tried.values()), rates


def test_steps_decide_from_the_target_the_agent_stated() -> None:
    """The agent counts the class it last said it counts: an opening pass that names
    another class than the question's leads to that class's count."""
    system = make_system("react", "visual_count")
    for task in tasks(8):
        recorded = _episode(task).history
        other = ("red" if task.colour != "red" else "blue", task.shape)
        wrong = decide(recorded[:1], other)
        assert other[0] in wrong.content and wrong.tool_args == {}
        result = warm_start(VisualCountEnv(task), system, recorded, 1, wrong, MAX_STEPS)
        expected = sum(c == other[0] and other[1] in (None, s) for c, s, _ in task.objects)
        assert result.episode.history[-1].tool_args == {"answer": str(expected)}


def test_a_second_look_restates_the_note_it_confirms() -> None:
    """A confirmation states the region's tally as the note before it did, so a misread
    note is carried (not silently corrected) by the second look."""
    seen = 0
    for task in tasks(20):
        history = _episode(task).history
        noted: dict = {}
        for step in history:
            if step.kind != "action":
                continue
            for region, tally in parse_notes(step.content):
                if _step_kind(step.as_action()) == "confirm":
                    assert tally == noted[region]
                    seen += 1
                noted[region] = tally
    assert seen >= 3


def test_a_miscopied_colour_pass_flips_the_run() -> None:
    """action.wrong_tool_argument applies to the colour pass only, and the colour the agent
    then takes for the target's carries to the answer."""
    system = make_system("react", "visual_count")
    op = COUNT_OPERATORS["action.wrong_tool_argument"]
    applied = flipped = 0
    for task in tasks(12):
        recorded = _episode(task).history
        for t, step in enumerate(recorded):
            if step.kind != "action":
                continue
            wrong = op(step.as_action(), random.Random(t), recorded[:t])
            if "colour" not in (step.tool_args or {}):
                assert wrong is None
                continue
            assert wrong is not None and wrong.tool_args["colour"] != step.tool_args["colour"]
            result = warm_start(VisualCountEnv(task), system, recorded, t, wrong, MAX_STEPS)
            applied += 1
            flipped += not result.episode.verdict.success
    assert applied == 12 and flipped >= 10
