from __future__ import annotations

import functools
import random
import re

import numpy as np
import pytest

from whowhen.assembly import make_system
from whowhen.benchmarks.event_timing.actions import SUMMARY_RE
from whowhen.benchmarks.event_timing.env import EventTimingEnv
from whowhen.benchmarks.event_timing.operators import OPERATORS as OWN_OPERATORS
from whowhen.benchmarks.event_timing.prompts import PROMPTS
from whowhen.benchmarks.event_timing.render import PALETTE, detect, in_zone, render_frame
from whowhen.benchmarks.event_timing.tasks import (
    KINDS,
    crossings,
    generate_tasks,
    make_tasks,
    parse_task,
)
from whowhen.media import load_rgb, media_path
from whowhen.operators import OPERATORS, random_slip
from whowhen.registry import get_benchmark
from whowhen.runtime import Action, Step, run_episode, warm_start

from .conftest import MAX_STEPS
from .operator_checks import valid_for_env

CFG = {"n_tasks": 30}
SEED = 4
SYSTEMS = ("react", "orchestrator")


@functools.cache
def tasks() -> list:
    """Generated once; each test's fresh media store gets the frames of the tasks it resets
    (EventTimingEnv.reset re-stores missing frames)."""
    return generate_tasks(CFG["n_tasks"], SEED)


def rollout(task, system: str = "react"):
    return run_episode(EventTimingEnv(task), make_system(system, "event_timing"), MAX_STEPS)


def test_tasks_are_seeded_and_gold_follows_the_simulation() -> None:
    first = make_tasks(CFG, SEED)  # memoized, with every frame re-stored
    fresh = generate_tasks(CFG["n_tasks"], SEED)  # rendered again
    assert make_tasks(CFG, SEED) == first
    assert fresh == first and [t.media for t in fresh] == [t.media for t in first]
    assert generate_tasks(3, SEED + 1) != fresh[:3]
    assert {t.kind for t in first} == set(KINDS)
    assert get_benchmark("event_timing").modality == "video"
    for task in first:
        assert len(task.media) == len(task.tracks[0]) == 41
        assert all(media_path(ref).exists() for ref in task.media)
        spec = parse_task(EventTimingEnv(task).reset())
        assert (spec.kind, spec.zone, spec.line) == (task.kind, task.zone, task.line)
        tracks = dict(zip(task.colours, task.tracks, strict=True))
        if task.kind == "cross":
            xs = [x for x, _ in tracks[task.target]]
            assert task.line not in xs and str(crossings(xs, task.line)) == task.answer
            continue
        entries = {
            c: next((f for f, p in enumerate(t) if in_zone(p, task.zone)), None)
            for c, t in tracks.items()
        }
        if task.kind == "enter":
            assert entries[task.target] == int(task.answer) > 0
        else:
            entered = {c: e for c, e in entries.items() if e is not None}
            assert min(entered.values()) > 0 and min(entered, key=entered.get) == task.answer
            assert list(entered.values()).count(entered[task.answer]) == 1


def test_frames_are_re_stored_in_a_new_media_store(tmp_path, monkeypatch) -> None:
    task = tasks()[0]
    monkeypatch.setenv("WHOWHEN_MEDIA_DIR", str(tmp_path / "other"))
    assert not media_path(task.media[0]).exists()
    EventTimingEnv(task).reset()
    assert all(media_path(ref).exists() for ref in task.media)


def test_evaluator() -> None:
    assert EventTimingEnv.score("Frame 14", "14") and EventTimingEnv.score(" 2 ", "2")
    assert not EventTimingEnv.score("13", "14") and not EventTimingEnv.score(None, "14")
    assert EventTimingEnv.score("Green", "green") and not EventTimingEnv.score("red", "green")
    task = tasks()[0]
    env = EventTimingEnv(task)
    env.reset()
    env.step(Action("a", "", "final_answer", {"answer": task.answer}))
    assert env.done and env.evaluate().success
    env.reset()
    env.step(Action("a", "", "final_answer", {"answer": str(int(task.answer) + 1)}))
    assert not env.evaluate().success


def test_sample_frames_lists_and_shows_frames() -> None:
    task = tasks()[0]
    env = EventTimingEnv(task)
    env.reset()
    _, text, refs = env.step(Action("a", "", "sample_frames", {"start": 3, "end": 11, "step": 4}))
    assert text.startswith("Frames 3, 7, 11 ") and refs == tuple(task.media[i] for i in (3, 7, 11))
    for bad in ({"start": 5, "end": 2, "step": 1}, {"start": 0, "end": 41, "step": 1}):
        assert env.step(Action("a", "", "sample_frames", {**bad}))[1].startswith("Error:")
    assert env.step(Action("a", "", "sample_frames", {"start": "x"}))[1].startswith("Error:")
    assert env.step(Action("a", "", "detect_objects", {"frame": 99}))[1].startswith("Error:")


def test_detections_equal_the_simulation_in_every_frame() -> None:
    for task in tasks():
        env = EventTimingEnv(task)
        env.reset()
        for frame, ref in enumerate(task.media):
            found = detect(load_rgb(ref))
            truth = sorted((c, *t[frame]) for c, t in zip(task.colours, task.tracks, strict=True))
            assert len(found) == len(truth)  # the zone or line is never an object
            for (c, x, y), (tc, tx, ty) in zip(sorted(found), truth, strict=True):
                assert c == tc and abs(x - tx) <= 1 and abs(y - ty) <= 1
            text = env.step(Action("a", "", "detect_objects", {"frame": frame}))[1]
            assert text.count(" ball at (") == len(truth)
    empty = render_frame([], (10, 60, 20, 70), None)
    assert detect(empty) == [] and detect(render_frame([], None, 48)) == []


@pytest.mark.parametrize("system", SYSTEMS)
def test_reference_policies_solve_every_task(system: str) -> None:
    for task in tasks():
        episode = rollout(task, system)
        assert episode.end_reason == "done" and episode.verdict.success, task.question
        assert len(episode.history) <= 120  # well under the 240-step budget
    assert set(PROMPTS[system]) == set(make_system(system, "event_timing").agents)


def test_operators_give_different_valid_actions() -> None:
    rng = random.Random(0)
    task = next(t for t in tasks() if t.kind == "enter")
    react = rollout(task).history
    orch = rollout(task, "orchestrator").history
    detect_step = next(s for s in react if s.tool == "detect_objects")
    # dropped for event timing: a mistyped frame would contradict the stated one
    assert OPERATORS["action.wrong_tool_argument"](detect_step.as_action(), rng) is None
    sample = react[1].as_action()
    skipped = OPERATORS["planning.wrong_subgoal"](sample, rng)
    args = skipped.tool_args
    assert (
        args != sample.tool_args and f"frames {args['start']} to {args['end']}" in skipped.content
    )
    assert OPERATORS["action.wrong_tool_argument"](sample, rng) is None
    sent = next(s for s in orch if s.actor == "tracker" and s.kind == "message")
    report = sent.as_action()
    for mode in ("coordination.distorted_handoff", "perception.misidentified_object"):
        changed = OWN_OPERATORS[mode](report, rng, orch[: sent.step])
        assert changed.content != report.content and changed.content[:40] == report.content[:40]
        assert changed.content.count("; frame ") == report.content.count("; frame ")
    order = orch[1].as_action()
    assert OPERATORS["planning.wrong_subgoal"](order, rng, orch[:1]).content != order.content
    for op in OWN_OPERATORS.values():  # other benchmarks' actions are left alone
        assert op(Action("solver", "Next, add 3 to the running total of 4."), rng) is None
        assert op(Action("a", "x", "calculator", {"expression": "1 + 2"}), rng) is None


def test_misidentified_answer_uses_another_balls_value() -> None:
    rng = random.Random(1)
    for task in tasks():
        final = rollout(task).history[-1].as_action()
        wrong = OWN_OPERATORS["perception.misidentified_object"](final, rng)
        if wrong is None:
            continue
        assert wrong.tool_args["answer"] != task.answer
        assert wrong.content.endswith(f"Answer: {wrong.tool_args['answer']}.")
        before, after = _verdict_values(final), _verdict_values(wrong)
        changed = [c for c in before if before[c] != after[c]]
        assert before.keys() == after.keys() and len(changed) == 2  # two balls exchanged
        assert sorted(before.values()) == sorted(after.values())


def _verdict_values(action: Action) -> dict[str, str]:
    """Ball -> value, as a verdict lists them."""
    return dict(re.findall(r"(\w+) (\d+|none)", SUMMARY_RE.search(action.content).group(2)))


def _outcomes(system: str, mode: str, n_tasks: int = 8):
    """(t, success, recovered) of injecting `mode` at every step it applies to."""
    policy = make_system(system, "event_timing")
    for task in tasks()[:n_tasks]:
        history = rollout(task, system).history
        for step in history:
            if not step.is_agent_step:
                continue
            wrong = OPERATORS[mode](
                step.as_action(), random.Random(step.step), history[: step.step]
            )
            if wrong is None:
                continue
            assert wrong != step.as_action()
            result = warm_start(EventTimingEnv(task), policy, history, step.step, wrong, MAX_STEPS)
            assert result.fidelity.exact
            yield task, step, result.episode


@pytest.mark.parametrize(
    ("system", "mode"),
    [
        ("react", "planning.wrong_subgoal"),
        ("react", "perception.misidentified_object"),
        ("react", "planning.premature_finish"),
        ("react", "reasoning.miscount"),
        ("orchestrator", "planning.premature_finish"),
        ("orchestrator", "coordination.distorted_handoff"),
        ("orchestrator", "perception.misidentified_object"),
        ("orchestrator", "planning.wrong_subgoal"),
        ("orchestrator", "coordination.ignored_message"),
    ],
)
def test_injected_errors_propagate(system: str, mode: str) -> None:
    failed = [ep for _, _, ep in _outcomes(system, mode) if not ep.verdict.success]
    assert failed and all(ep.end_reason == "done" for ep in failed)


def test_verifier_catches_a_misread_analyst_value() -> None:
    """The verifier recomputes the answer about the ball the analyst names: a value the
    analyst misread is sent back and redone (a ball taken for another is not: the verifier
    checks the question as it is handed on, so that error carries on)."""
    policy = make_system("orchestrator", "event_timing")
    for task in (t for t in tasks() if t.kind == "enter"):
        history = rollout(task, "orchestrator").history
        step = next(s for s in history if s.actor == "analyst")
        wrong = str(int(task.answer) + 1)
        text = step.content.replace(f" {task.answer}.", f" {wrong}.")
        slipped = Action("analyst", text)
        result = warm_start(EventTimingEnv(task), policy, history, step.step, slipped, MAX_STEPS)
        assert result.episode.verdict.success
        assert any("disagrees" in s.content for s in result.episode.history)
    mixed = [
        (task.kind, ep)
        for task, step, ep in _outcomes("orchestrator", "perception.misidentified_object")
        if step.actor == "analyst"
    ]
    assert mixed and not any(ep.verdict.success for kind, ep in mixed if kind != "first")
    assert all(ep.verdict.success for kind, ep in mixed if kind == "first")  # recomputed


@pytest.mark.parametrize("system", SYSTEMS)
def test_slip_model_at_rate_one_fails_without_crashing(system: str) -> None:
    results = []
    for task in tasks()[:12]:
        agent = make_system(system, "event_timing", slip_rate=1.0, slip=random_slip)
        episode = run_episode(EventTimingEnv(task), agent, MAX_STEPS)
        assert not episode.end_reason.startswith("error"), episode.end_reason
        assert agent.slips
        results.append(episode.verdict.success)
    assert not all(results)


def test_detector_ignores_grey_and_reads_every_palette_colour() -> None:
    balls = [(c, (12 + 22 * i, 30 + 9 * i)) for i, c in enumerate(PALETTE)]
    frame = render_frame(balls, (5, 90, 5, 90), 50)
    assert sorted(detect(frame)) == sorted((c, x, y) for c, (x, y) in balls)
    assert np.array_equal(frame, render_frame(balls, (5, 90, 5, 90), 50))


MARKERS = ("inject", "error", "wrong", "mistake", "slip", "oops")


def _check_replacement(new: Action | None, old: Action, system: str) -> Action:
    """A replacement that differs, is valid for the environment and carries no marker."""
    assert new is not None and new != old and new.actor == old.actor
    assert valid_for_env(new, "event_timing", system)
    assert not any(w in new.content.lower() for w in MARKERS), new.content
    return new


def test_premature_finish_answers_from_the_detections_so_far() -> None:
    op = OWN_OPERATORS["planning.premature_finish"]
    rng = random.Random(2)
    task = next(  # entered between two coarse frames: the coarse one is too late
        t for t in tasks() if t.kind == "enter" and int(t.answer) % 4 and len(_scans(t)) == 2
    )
    history = rollout(task).history
    refine = _scans(task)[1]  # between the last frame outside and the first inside
    coarse = refine.tool_args["end"] + 1
    new = op(refine.as_action(), rng, history[: refine.step])
    new = _check_replacement(new, refine.as_action(), "react")
    assert new.tool == "final_answer" and new.tool_args == {"answer": str(coarse)}
    assert new.content.endswith(f"Answer: {coarse}.") and int(task.answer) < coarse
    first = history[1]  # the first scan: nothing detected yet to answer from
    assert op(first.as_action(), rng, history[:1]) is None
    cross = next(t for t in tasks() if t.kind == "cross")
    steps = rollout(cross).history
    late = [s for s in steps if s.tool == "detect_objects"][-1]
    new = op(late.as_action(), rng, steps[: late.step])
    new = _check_replacement(new, late.as_action(), "react")
    assert new.content.startswith("Crossings of the line") and new.tool == "final_answer"
    orch = rollout(task, "orchestrator").history
    scan = [s for s in orch if s.actor == "tracker" and s.tool == "detect_objects"][2]
    report = op(scan.as_action(), rng, orch[: scan.step])
    report = _check_replacement(report, scan.as_action(), "orchestrator")
    assert report.tool is None and report.content.count("frame ") == 2


def _scans(task) -> list[Step]:
    """The react run's sample_frames calls (the coarse scan, then the frames between)."""
    return [s for s in rollout(task).history if s.tool == "sample_frames"]


def test_miscount_is_off_by_one_for_the_asked_ball() -> None:
    op = OWN_OPERATORS["reasoning.miscount"]
    rng = random.Random(3)
    checked = 0
    for task in (t for t in tasks() if t.kind == "cross"):
        final = rollout(task).history[-1].as_action()
        new = _check_replacement(op(final, rng), final, "react")
        assert abs(int(new.tool_args["answer"]) - int(task.answer)) == 1
        assert new.content.endswith(f"Answer: {new.tool_args['answer']}.")
        assert f"{task.target} {new.tool_args['answer']}" in new.content
        checked += 1
    assert checked
    enter = next(t for t in tasks() if t.kind == "enter")
    assert op(rollout(enter).history[-1].as_action(), rng) is None  # not a count


def test_false_approval_takes_back_a_rejection() -> None:
    op = OWN_OPERATORS["verification.false_approval"]
    task = next(t for t in tasks() if t.kind == "enter")
    history = rollout(task, "orchestrator").history
    handoff = next(s for s in history if s.content.startswith("To verifier:"))
    wrong = str(int(task.answer) + 1)
    slipped = Action(
        "orchestrator", handoff.content.replace(f" is {task.answer}.", f" is {wrong}.")
    )
    policy = make_system("orchestrator", "event_timing")
    episode = warm_start(
        EventTimingEnv(task), policy, history, handoff.step, slipped, MAX_STEPS
    ).episode
    assert episode.verdict.success  # the verifier caught it...
    reject = next(s for s in episode.history if "recompute" in s.content)
    claimed = slipped.content.split(" is ")[1].split(".")[0]
    new = op(reject.as_action(), random.Random(0), episode.history[: reject.step])
    new = _check_replacement(new, reject.as_action(), "orchestrator")
    assert new.tool == "final_answer" and new.tool_args == {"answer": claimed}
    assert new.content.startswith("The analyst's answer matches the tracker's detections.")
    result = warm_start(EventTimingEnv(task), policy, episode.history, reject.step, new, MAX_STEPS)
    assert not result.episode.verdict.success  # ...and approving it instead fails
    assert op(reject.as_action(), random.Random(0)) is None  # no history: no task to read


def test_new_operators_leave_foreign_actions_alone() -> None:
    rng = random.Random(0)
    foreign = [Step(0, "user", "message", "Count the red squares in the image.")]
    actions = [
        Action("assistant", "I will detect the objects in the image.", "detect_objects", {}),
        Action("verifier", "To solver: The total should be 12, not 14. Please redo step 2."),
        Action("assistant", "I see 4 red squares. Answer: 4.", "final_answer", {"answer": "4"}),
    ]
    for mode in ("planning.premature_finish", "reasoning.miscount", "verification.false_approval"):
        for action in actions:  # through the registry, which hands every operator the history
            assert OPERATORS[mode](action, rng, foreign) is None
