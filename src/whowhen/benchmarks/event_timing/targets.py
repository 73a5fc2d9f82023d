"""Operators that take one ball for another in the step that states which ball is followed
(every kind of step can be a decisive gold step).

Every step of both systems names the ball(s) it follows, and the next steps read that
belief from the latest step that stated it. So a step that names another ball, in the
policy's own wording for that step, carries the mix-up to the answer: react's samples,
detections, re-checks and gap reason; the tracker's samples, detections and report; the
orchestrator's orders and its hand-offs to the analyst and the verifier; the analyst's
and the verifier's verdicts. The replacement re-says the step with the policy's builders
(the same phrasing draw, another ball), so its text and action agree.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Sequence
from dataclasses import replace

from whowhen.agents.scripted import tell
from whowhen.benchmarks.event_timing.actions import (
    ABOUT_RE,
    ANSWER_RE,
    APPROVED,
    DETECT_RE,
    GAP_RE,
    POINT_RE,
    REPORT_RE,
    TO_VERIFIER_RE,
    balls_of,
    balls_text,
    detect_action,
    detections_of,
    reported,
    sample_action,
    verdict_text,
)
from whowhen.benchmarks.event_timing.tasks import QUESTIONS, Spec, parse_task, summarize
from whowhen.runtime import Action, Step

SCENE_BALLS_RE = re.compile(r"It shows \d+ balls \(([\w, ]+)\)")
_QUESTION_RE = re.compile(r"answer: (?P<q>.*)$")


def spec_of(history: Sequence[Step]) -> Spec | None:
    """The task's spec from the visible history (None without an event timing task)."""
    try:
        return parse_task(history[0].content) if history else None
    except (AttributeError, ValueError):
        return None


def scene_balls(history: Sequence[Step]) -> list[str]:
    """The balls the task says the video shows."""
    m = SCENE_BALLS_RE.search(history[0].content) if history else None
    return re.split(r", | and ", m.group(1)) if m else []


def _other(history: Sequence[Step], balls: Sequence[str], rng: random.Random) -> str | None:
    """Another ball of the scene than `balls`, drawn."""
    others = [c for c in scene_balls(history) if c not in balls]
    return rng.choice(others) if others else None


def switched_step(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """A sample, detection or re-check step (react's or the tracker's) that follows another
    ball than the one it followed: the same wording, another ball named."""
    balls = balls_of(action.content)
    if not balls or spec_of(history) is None:
        return None
    new = _other(history, balls, rng)
    if new is None:
        return None
    if action.tool == "detect_objects":
        m = DETECT_RE.search(action.content)
        if m is None:
            return None
        again = action.content.endswith(" again.")  # every re-check wording ends so
        return detect_action(action.actor, int(m.group(1)), history, (new,), again)
    if action.tool != "sample_frames" or "I will look at" not in action.content:
        return None
    args = action.tool_args or {}
    a, b, s = (int(args.get(k, 0)) for k in ("start", "end", "step"))
    head = action.content[: action.content.index("I will look at")]
    gap = GAP_RE.match(head)
    if gap and gap["ball"]:  # the ball seen entering taken for another
        why = head[: gap.start("ball")] + new + head[gap.end("ball") :]
    elif gap:
        said = head[gap.start("balls") :].split(" in frame ")[0]
        why = head.replace(said, f"the {new} ball is", 1)
    elif balls_text(balls) in head:
        why = head.replace(balls_text(balls), f"the {new} ball", 1)
    else:
        return None
    return sample_action(action.actor, why, a, b, s)


def report_answer(history: Sequence[Step], report: Action, ball: str | None) -> str:
    """The answer the tracker's reports give (about `ball`, else the task's) once `report`
    is sent: what a changed report must change to reach the answer."""
    spec = spec_of(history)
    asked = replace(spec, colour=ball) if ball else spec
    sent = Step(len(history), report.actor, "message", report.content)
    return summarize(asked, reported([*history, sent]))[1]


def _asked_ball(history: Sequence[Step]) -> str | None:
    """The ball the orchestrator's latest order names (None: all balls)."""
    for step in reversed(history):
        if step.actor == "orchestrator" and step.content.startswith("To tracker: "):
            balls = balls_of(step.content)
            return balls[0] if balls else None
    return None


def switched_report(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """The tracker's report of one ball with that ball taken for another in every frame
    (the positions it saw, filed under the other colour)."""
    head = REPORT_RE.match(action.content) if action.tool is None else None
    balls = balls_of(head.group(1)) if head else None
    if not balls or len(balls) != 1:
        return None
    new = _other(history, balls, rng)
    if new is None:
        return None
    body = POINT_RE.sub(
        lambda m: f"{new if m[1] == balls[0] else m[1]} ({m[2]}, {m[3]})",
        action.content[head.end() :],
    )
    text = f"To orchestrator: Detections while tracking the {new} ball: {body}"
    new_report = Action(action.actor, text)
    ball = _asked_ball(history)
    if report_answer(history, new_report, ball) == report_answer(history, action, ball):
        return None  # nothing this report adds reaches the answer
    return new_report


def swapped_report(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """The tracker's report of all balls with two balls' colours mixed up in every frame:
    of the pairs, one whose mix-up changes what the reports give."""
    head = REPORT_RE.match(action.content) if action.tool is None else None
    spec = spec_of(history)
    if head is None or balls_of(head.group(1)) != () or spec is None:
        return None
    present = sorted({c for c, _, _ in POINT_RE.findall(action.content)})
    old = report_answer(history, action, None)
    copies = []
    for first, second in itertools.combinations(present, 2):
        swap = {first: second, second: first}
        body = POINT_RE.sub(
            lambda m, swap=swap: f"{swap.get(m[1], m[1])} ({m[2]}, {m[3]})",
            action.content[head.end() :],
        )
        copy = Action(action.actor, action.content[: head.end()] + body)
        if report_answer(history, copy, None) != old:
            copies.append(copy)
    return rng.choice(copies) if copies else None


def switched_order(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """An order to the tracker, or the question restated to the analyst, about another
    ball than the one asked (what the orchestrator passes on is what the others follow)."""
    spec = spec_of(history)
    if action.tool is not None or spec is None or action.actor != "orchestrator":
        return None
    if action.content.startswith("To tracker: Track the "):
        balls = balls_of(action.content)
        new = _other(history, balls or (), rng) if balls else None
        if new is None:
            return None
        return Action(action.actor, action.content.replace(balls_text(balls), f"the {new} ball", 1))
    m = _QUESTION_RE.search(action.content)
    if not action.content.startswith("To analyst: ") or m is None or spec.kind == "first":
        return None
    balls = balls_of(m["q"])
    new = _other(history, balls or (), rng) if balls else None
    if new is None:
        return None
    question = QUESTIONS[spec.kind].format(colour=new, line=spec.line)
    return Action(action.actor, action.content[: m.start("q")] + question)


def switched_handoff(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """The orchestrator's hand-off to the verifier about another ball than the analyst
    answered about, with the answer the reports give for that ball (a question about one
    ball passed on as about another)."""
    m = TO_VERIFIER_RE.match(action.content) if action.tool is None else None
    spec = spec_of(history)
    if m is None or spec is None:
        return None
    if not m["ball"]:  # "which first": another colour, which the verifier sends back
        new = _other(history, (m["answer"],), rng)
        if new is None or spec.kind != "first":
            return None
        return tell(
            "orchestrator",
            "verifier",
            action.content.split(": ", 1)[1].replace(m["answer"], new, 1),
        )
    new = _other(history, (m["ball"],), rng)
    if new is None:
        return None
    _, answer = summarize(replace(spec, colour=new), reported(history))
    if answer == m["answer"]:
        return None
    text = (
        f"The analyst's answer about the {new} ball is {answer}. Please check it against "
        "the tracker's detections."
    )
    return tell("orchestrator", "verifier", text)


def switched_verdict(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """A verdict about another ball than the asked one: react's answer (the other ball's
    first frame inside or crossings in its detections), the analyst's message or the
    verifier's approval (the other ball's value in the tracker's reports)."""
    spec = spec_of(history)
    about = ABOUT_RE.search(action.content)
    if spec is None or about is None or ANSWER_RE.search(action.content) is None:
        return None
    new = _other(history, (about.group(1),), rng)
    if new is None:
        return None
    asked = replace(spec, colour=new)
    if action.actor == "assistant" and action.tool == "final_answer":
        track = detections_of(history, 0, "assistant")
        items, answer = summarize(asked, track)
        if spec.kind == "enter":
            items = {new: answer}
    elif (action.tool is None and action.actor == "analyst") or (
        action.actor == "verifier" and action.content.startswith(APPROVED)
    ):
        items, answer = summarize(asked, reported(history))
    else:
        return None
    if answer == ANSWER_RE.search(action.content).group(1):
        return None
    return _verdict_action(action, asked, items, answer)


def _verdict_action(action: Action, asked: Spec, items: dict[str, str], answer: str) -> Action:
    """A verdict step of `action`'s agent, in its own form, over `items`."""
    text = verdict_text(asked, items, answer)
    if action.tool == "final_answer":
        prefix = APPROVED if action.actor == "verifier" else ""
        return Action(action.actor, prefix + text, "final_answer", {"answer": answer})
    return tell("analyst", "orchestrator", text)


def switched_first(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """ "Which ball first": react's answer about another ball than the one it followed (its
    first frame inside in the detections), or the verifier's approval with the answered
    ball and another taken for each other in the reports' values."""
    spec = spec_of(history)
    answer = ANSWER_RE.search(action.content)
    if spec is None or spec.kind != "first" or answer is None:
        return None
    if action.tool != "final_answer" and action.actor != "analyst":
        return None
    old = answer.group(1)
    if action.actor == "assistant":
        new = _other(history, (old,), rng)
        if new is None:
            return None
        items, _ = summarize(spec, detections_of(history, 0, "assistant"))
        value = items.get(new, "none")
        return _verdict_action(action, spec, {new: value}, new if value != "none" else "none")
    if action.actor == "analyst" or (
        action.actor == "verifier" and action.content.startswith(APPROVED)
    ):
        items, _ = summarize(spec, reported(history))
    else:
        return None
    others = [c for c in items if c != old and items[c] != items.get(old)]
    if old not in items or not others:
        return None
    other = rng.choice(others)
    swapped = {
        c: items[other] if c == old else items[old] if c == other else v for c, v in items.items()
    }
    entered = [(int(v), c) for c, v in swapped.items() if v != "none"]
    new_answer = min(entered)[1] if entered else "none"
    if new_answer == old:
        return None
    return _verdict_action(action, spec, swapped, new_answer)
