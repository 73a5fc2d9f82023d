"""The event timing policies' messages and actions: templates, builders and the parsers
that read them back."""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.benchmarks.event_timing.render import in_zone
from whowhen.benchmarks.event_timing.tasks import (
    Detections,
    Spec,
    parse_objects,
)
from whowhen.runtime import Action, Step

FRAMES_RE = re.compile(r"frames (\d+) to (\d+) with step (\d+)")
DETECT_RE = re.compile(r"detect the objects in frame (\d+)")
LISTING_RE = re.compile(r"^Frames ([\d, ]+) \(")
SUMMARY_RE = re.compile(
    r"(First frame inside the zone|Crossings of the line x = \d+) in the detections: "
    r"((?:\w+ (?:\d+|none)(?:, )?)+)\."
)
GAP_RE = re.compile(
    r"^(?:The (?P<ball>\w+) ball is outside the zone in frame (?P<before>\d+) and inside in "
    r"frame (?P<inside>\d+)|No ball is in the zone in frame (?P<none>\d+) and "
    r"(?P<balls>the (?:\w+, )*\w+(?: and \w+)? balls?) (?:is|are) in frame (?P<seen>\d+)), so "
)
"""The reason react gives for sampling the frames between two coarse frames: the bracket
(last frame outside, first frame inside) and the ball(s) it believes entered there."""
BALLS_RE = re.compile(
    r"\b(?:[Tt]he (\w+) ball\b|[Tt]he ((?:\w+, )*\w+ and \w+) balls\b|all balls\b)"
)
"""The ball(s) a step says it follows ("the red ball", "the red and blue balls", "all
balls"): the working belief each step restates and the next step reads back."""
ANSWER_RE = re.compile(r"Answer: (\w+)\.$")
ABOUT_RE = re.compile(r"The question is about the (\w+) ball\.")
TRACK_RE = re.compile(r"^To tracker: Track (the \w+ ball|all balls) in frames")
REPORT_RE = re.compile(r"^To orchestrator: Detections while tracking (the \w+ ball|all balls): ")
ENTRY_RE = re.compile(r"frame (\d+): ([^;]*?)(?=; frame |\.$)")
POINT_RE = re.compile(r"(\w+) \((\d+), (\d+)\)")
TO_VERIFIER_RE = re.compile(
    r"^To verifier: The analyst's answer (?:about the (?P<ball>\w+) ball )?is (?P<answer>\w+)\."
)
APPROVED = "The analyst's answer matches the tracker's detections. "
REJECTED = (
    "The tracker's detections give {answer}, not {claimed}. Please have the analyst "
    "recompute the answer."
)
REJECT_RE = re.compile(
    r"^To orchestrator: The tracker's detections give (\w+), not (\w+)\. Please have the "
    r"analyst recompute the answer\.$"
)
COUNT_RE = re.compile(r"^(?:To orchestrator: )?Crossings of the line x = \d+ in the detections")


def frames_text(a: int, b: int, s: int) -> str:
    return f"frames {a} to {b} with step {s}"


def balls_text(balls: Sequence[str] | None) -> str:
    """'the red ball', 'the red and blue balls', or (None or empty: every ball) 'all balls'."""
    if not balls:
        return "all balls"
    if len(balls) == 1:
        return f"the {balls[0]} ball"
    return f"the {', '.join(balls[:-1])} and {balls[-1]} balls"


def balls_of(text: str) -> tuple[str, ...] | None:
    """The balls a step's text says it follows (empty: all balls; None: it names none)."""
    m = BALLS_RE.search(text)
    if m is None:
        return None
    if m.group(1):
        return (m.group(1),)
    return tuple(re.split(r", | and ", m.group(2))) if m.group(2) else ()


def stated_balls(
    history: Sequence[Step], actors: Sequence[str], since: int = 0
) -> tuple[str, ...] | None:
    """The balls the most recent step of `actors` after `since` says it follows: what the
    agent *said* it believes, so a slip in any such step carries on (None: none said)."""
    for step in reversed(history[since:]):
        if step.actor in actors and step.kind in ("action", "message"):
            balls = balls_of(step.content)
            if balls is not None:
                return balls
    return None


def zone_balls(
    spec: Spec, objects: dict[str, tuple[int, int]], balls: Sequence[str] | None
) -> tuple[str, ...]:
    """The followed balls (None: any ball) in the zone in one frame, in detection order."""
    return tuple(
        c for c, p in objects.items() if (not balls or c in balls) and in_zone(p, spec.zone)
    )


def sample_action(actor: str, why: str, a: int, b: int, s: int) -> Action:
    text = f"{why}I will look at {frames_text(a, b, s)}."
    return Action(actor, text, "sample_frames", {"start": a, "end": b, "step": s})


DETECTS = (
    "I will detect the objects in frame {frame} to follow {balls}.",
    "Next I need to detect the objects in frame {frame}, still following {balls}.",
    "Frame {frame} comes next, so I'll detect the objects in frame {frame} to keep track of "
    "{balls}.",
)
RECHECKS = (
    "Frame {frame} is on the boundary of the event for {balls}; to be sure, I will detect "
    "the objects in frame {frame} again.",
    "The answer about {balls} rests on frame {frame}, so let me detect the objects in frame "
    "{frame} again.",
    "Before answering I re-check the boundary for {balls}: detect the objects in frame "
    "{frame} again.",
)


def detect_action(
    actor: str,
    frame: int,
    history: Sequence[Step] = (),
    balls: Sequence[str] | None = None,
    again: bool = False,
) -> Action:
    """A detection of one frame, in the wording drawn for this step, naming the ball(s) the
    agent follows (a re-check of a boundary frame says so)."""
    key, variants = ("et.recheck", RECHECKS) if again else ("et.detect", DETECTS)
    text = phrasing.phrase(history, key, variants, frame=frame, balls=balls_text(balls))
    return Action(actor, text, "detect_objects", {"frame": frame})


def listings_of(history: Sequence[Step], since: int, actor: str) -> list[list[int]]:
    """Frames listed by each successful sample_frames call of `actor` after `since`."""
    found = []
    for step in history[since:]:
        if step.kind == "observation" and step.actor == "sample_frames":
            if history[step.step - 1].actor != actor:
                continue
            m = LISTING_RE.match(step.content)
            if m:
                found.append([int(f) for f in m.group(1).split(", ")])
    return found


def detections_of(history: Sequence[Step], since: int, actor: str) -> Detections:
    """Detections of `actor` after `since`, filed under the frame each call meant to see."""
    track: Detections = {}
    for step in history[since:]:
        if step.kind == "observation" and step.actor == "detect_objects":
            call = history[step.step - 1]
            m = DETECT_RE.search(call.content)
            if call.actor == actor and m:
                track[int(m.group(1))] = parse_objects(step.content)
    return track


def verdict_text(spec: Spec, items: dict[str, str], answer: str) -> str:
    """'<what> in the detections: red 14, blue none. [The question is ...] Answer: X.'"""
    what = (
        f"Crossings of the line x = {spec.line}"
        if spec.kind == "cross"
        else "First frame inside the zone"
    )
    listed = ", ".join(f"{c} {v}" for c, v in items.items()) or "no balls"
    about = "" if spec.kind == "first" else f"The question is about the {spec.colour} ball. "
    return f"{what} in the detections: {listed}. {about}Answer: {answer}."


def question_of(history: Sequence[Step]) -> str:
    return history[0].content.rsplit("Question: ", 1)[-1].strip()


def reported(history: Sequence[Step]) -> Detections:
    """Every detection the tracker reported to the orchestrator (later reports win)."""
    track: Detections = {}
    for step in history:
        if step.actor == "tracker" and step.kind == "message" and REPORT_RE.match(step.content):
            for frame, objs in ENTRY_RE.findall(step.content.split(": ", 2)[2]):
                track[int(frame)] = {c: (int(x), int(y)) for c, x, y in POINT_RE.findall(objs)}
    return track


def report_text(what: str, frames: Sequence[int], track: Detections) -> str:
    """The tracker's report: the detections of the ball(s) it tracks (`what`, as its steps
    name them), frame by frame."""
    balls = balls_of(what)

    def entry(frame: int) -> str:
        objs = {c: p for c, p in track.get(frame, {}).items() if not balls or c in balls}
        return ", ".join(f"{c} ({x}, {y})" for c, (x, y) in objs.items()) or "none"

    listed = "; ".join(f"frame {f}: {entry(f)}" for f in frames)
    return f"Detections while tracking {what}: {listed}."
