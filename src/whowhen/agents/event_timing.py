"""Scripted reference policies for event timing in videos, deciding only from the visible
history (the task text, their own stated intents and the tools' observations).

react: scan every 4th frame until the ball (any ball, for "which first") is in the zone,
then check the frames between the last frame outside and the first inside; for a line,
detect every 2nd frame (a ball moves at most 4 px per frame and the line is far from the
walls, so it cannot cross twice in between).
orchestrator: the orchestrator has the tracker detect a coarse range (and then the gap
before the first frame inside), the analyst answers from the tracker's detections, and
the verifier recomputes from the same detections: a slip of the analyst or of a hand-off
to the verifier is caught and redone, a wrong detection report propagates.

A detection is filed under the frame the agent *meant* to look at (its stated intent), so
a mistyped frame argument propagates as it would for a model.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from whowhen.agents.scripted import ScriptedOrchestrator, ScriptedReact, addressee, tell
from whowhen.benchmarks.event_render import MAX_SPEED, PALETTE
from whowhen.benchmarks.event_timing import (
    COARSE,
    Detections,
    EventTimingEnv,
    Spec,
    ball_in_zone,
    parse_objects,
    parse_task,
    summarize,
)
from whowhen.runtime import Action, Step

FINE = 2  # stride for line crossings
FRAMES_RE = re.compile(r"frames (\d+) to (\d+) with step (\d+)")
DETECT_RE = re.compile(r"detect the objects in frame (\d+)")
LISTING_RE = re.compile(r"^Frames ([\d, ]+) \(")
SUMMARY_RE = re.compile(
    r"(First frame inside the zone|Crossings of the line x = \d+) in the detections: "
    r"((?:\w+ (?:\d+|none)(?:, )?)+)\."
)
ANSWER_RE = re.compile(r"Answer: (\w+)\.$")
ABOUT_RE = re.compile(r"The question is about the (\w+) ball\.")
TRACK_RE = re.compile(r"^To tracker: Track (the \w+ ball|all balls) in frames")
REPORT_RE = re.compile(r"^To orchestrator: Detections while tracking (the \w+ ball|all balls): ")
ENTRY_RE = re.compile(r"frame (\d+): ([^;]*?)(?=; frame |\.$)")
POINT_RE = re.compile(r"(\w+) \((\d+), (\d+)\)")
TO_VERIFIER_RE = re.compile(r"^To verifier: The analyst's answer is (\w+)\.")


def frames_text(a: int, b: int, s: int) -> str:
    return f"frames {a} to {b} with step {s}"


def sample_action(actor: str, why: str, a: int, b: int, s: int) -> Action:
    text = f"{why}I will look at {frames_text(a, b, s)}."
    return Action(actor, text, "sample_frames", {"start": a, "end": b, "step": s})


def detect_action(actor: str, frame: int) -> Action:
    return Action(
        actor, f"I will detect the objects in frame {frame}.", "detect_objects", {"frame": frame}
    )


def _listings(history: Sequence[Step], since: int, actor: str) -> list[list[int]]:
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


def _detections(history: Sequence[Step], since: int, actor: str) -> Detections:
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


def _question(history: Sequence[Step]) -> str:
    return history[0].content.rsplit("Question: ", 1)[-1].strip()


class EventReactSystem(ScriptedReact):
    """One agent: coarse-to-fine frame search for zone entries, every 2nd frame for lines."""

    def act(self, history: Sequence[Step]) -> Action:
        spec = parse_task(history[0].content)
        listings = _listings(history, 0, "assistant")
        track = _detections(history, 0, "assistant")
        last = spec.n_frames - 1
        if spec.kind == "cross":
            if not listings:
                why = (
                    f"To count the {spec.colour} ball's crossings of the line x = {spec.line} "
                    f"(a ball moves at most {MAX_SPEED} pixels per frame), "
                )
                return sample_action("assistant", why, 0, last, FINE)
            todo = [f for f in listings[0] if f not in track]
            return detect_action("assistant", todo[0]) if todo else self._final(spec, track)
        who = f"the {spec.colour} ball" if spec.kind == "enter" else "a ball"
        if not listings:
            why = f"To find the first frame with {who} in the zone, "
            return sample_action("assistant", why, 0, last, COARSE)
        inside, before = None, None
        for frame in listings[0]:
            if frame not in track:
                return detect_action("assistant", frame)
            if ball_in_zone(spec, track[frame]):
                inside = frame
                break
            before = frame
        if inside is None or before is None or inside - before <= 1:
            return self._final(spec, track)
        if len(listings) < 2:
            ball = ball_in_zone(spec, track[inside])
            why = (
                f"No ball is in the zone in frame {before} and the {ball} ball is in frame "
                f"{inside}, so "
                if spec.kind == "first"
                else f"The {ball} ball is outside the zone in frame {before} and inside in "
                f"frame {inside}, so "
            )
            return sample_action("assistant", why, before + 1, inside - 1, 1)
        for frame in listings[1]:
            if frame not in track:
                return detect_action("assistant", frame)
            if ball_in_zone(spec, track[frame]):
                break
        return self._final(spec, track)

    @staticmethod
    def _final(spec: Spec, track: Detections) -> Action:
        items, answer = summarize(spec, track)
        return Action(
            "assistant", verdict_text(spec, items, answer), "final_answer", {"answer": answer}
        )


def _reports(history: Sequence[Step]) -> Detections:
    """Every detection the tracker reported to the orchestrator (later reports win)."""
    track: Detections = {}
    for step in history:
        if step.actor == "tracker" and step.kind == "message" and REPORT_RE.match(step.content):
            for frame, objs in ENTRY_RE.findall(step.content.split(": ", 2)[2]):
                track[int(frame)] = {c: (int(x), int(y)) for c, x, y in POINT_RE.findall(objs)}
    return track


def report_text(what: str, frames: Sequence[int], track: Detections) -> str:
    def entry(frame: int) -> str:
        objs = track.get(frame, {})
        return ", ".join(f"{c} ({x}, {y})" for c, (x, y) in objs.items()) or "none"

    listed = "; ".join(f"frame {f}: {entry(f)}" for f in frames)
    return f"Detections while tracking {what}: {listed}."


class EventOrchestratorSystem(ScriptedOrchestrator):
    """Orchestrator, tracker (tools), analyst (reasons in its message), verifier."""

    agents = ("orchestrator", "tracker", "analyst", "verifier")

    def orchestrate(self, history: Sequence[Step]) -> Action:
        spec = parse_task(history[0].content)
        what = f"the {spec.colour} ball" if spec.kind != "first" else "all balls"
        mine = [s for s in history if s.actor == "orchestrator" and s.kind == "message"]
        handoffs = [s for s in mine if s.content.startswith("To tracker:")]
        if not handoffs:
            stride = FINE if spec.kind == "cross" else COARSE
            return self._track(what, 0, spec.n_frames - 1, stride)
        last = [s for s in history if s.is_agent_step][-1]
        if last.actor == "analyst":
            m = ANSWER_RE.search(last.content)
            answer = m.group(1) if m else "none"
            return tell(
                "orchestrator",
                "verifier",
                f"The analyst's answer is {answer}. Please check it against the tracker's "
                "detections.",
            )
        if last.actor == "tracker" and spec.kind != "cross" and len(handoffs) == 1:
            track = _reports(history)
            frames = sorted(track)
            inside = next((f for f in frames if ball_in_zone(spec, track[f])), None)
            if inside is not None and frames.index(inside) > 0:
                before = frames[frames.index(inside) - 1]
                if inside - before > 1:
                    return self._track(what, before + 1, inside - 1, 1)
        lead = ""
        if last.actor == "verifier":
            lead = "The verifier disagrees with the answer. "
        return tell(
            "orchestrator",
            "analyst",
            f"{lead}Using the tracker's detections, answer: {_question(history)}",
        )

    @staticmethod
    def _track(what: str, a: int, b: int, s: int) -> Action:
        return tell(
            "orchestrator",
            "tracker",
            f"Track {what} in {frames_text(a, b, s)} and report every detection.",
        )

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        spec = parse_task(history[0].content)
        if worker == "analyst":
            items, answer = summarize(spec, _reports(history))
            return tell("analyst", "orchestrator", verdict_text(spec, items, answer))
        since = max(
            i
            for i, s in enumerate(history)
            if s.actor == "orchestrator" and addressee(s) == "tracker"
        )
        order = history[since].content
        m, what_m = FRAMES_RE.search(order), TRACK_RE.match(order)
        a, b, s = (int(v) for v in m.groups()) if m else (0, spec.n_frames - 1, COARSE)
        what = what_m.group(1) if what_m else "all balls"
        listings = _listings(history, since, "tracker")
        if not listings:
            return sample_action("tracker", "", a, b, s)
        track = _detections(history, since, "tracker")
        todo = [f for f in listings[0] if f not in track]
        if todo:
            return detect_action("tracker", todo[0])
        return tell("tracker", "orchestrator", report_text(what, listings[0], track))

    def verify(self, history: Sequence[Step]) -> Action:
        spec = parse_task(history[0].content)
        m = TO_VERIFIER_RE.match(history[-1].content) if history else None
        claimed = m.group(1) if m else "none"
        items, answer = summarize(spec, _reports(history))
        if EventTimingEnv.score(claimed, answer):
            text = "The analyst's answer matches the tracker's detections. "
            return Action(
                "verifier",
                text + verdict_text(spec, items, claimed),
                "final_answer",
                {"answer": claimed},
            )
        return tell(
            "verifier",
            "orchestrator",
            f"The tracker's detections give {answer}, not {claimed}. Please have the analyst "
            "recompute the answer.",
        )


# --- operators: one slip per taxonomy mode, in the policies' own templates ---------------


def _others(items: dict[str, str], colour: str, value: str) -> list[str]:
    return [c for c, v in items.items() if c != colour and v not in ("none", value)]


def misidentified_object(action: Action, rng: random.Random) -> Action | None:
    """Another ball's value used for the asked one (an answer or the analyst's report), or
    the tracker's report with two balls' colours mixed up."""
    if action.tool is None and REPORT_RE.match(action.content):
        return _swap_colours(action, rng)
    summary, answer = SUMMARY_RE.search(action.content), ANSWER_RE.search(action.content)
    if summary is None or answer is None or action.tool not in (None, "final_answer"):
        return None
    items = dict(re.findall(r"(\w+) (\d+|none)", summary.group(2)))
    old = answer.group(1)
    if old in PALETTE:  # which ball first: another ball that entered (or any other)
        choices = _others(items, old, "none") or [c for c in items if c != old]
        new = rng.choice(choices) if choices else None
    else:
        about = ABOUT_RE.search(action.content)
        choices = [items[c] for c in _others(items, about.group(1) if about else "", old)]
        new = rng.choice(choices) if choices else None
    if new is None:
        return None
    content = action.content[: answer.start()] + f"Answer: {new}."
    args = {"answer": new} if action.tool == "final_answer" else action.tool_args
    return Action(action.actor, content, action.tool, args)


def _swap_colours(action: Action, rng: random.Random) -> Action | None:
    head = REPORT_RE.match(action.content)
    present = sorted({c for c, _, _ in POINT_RE.findall(action.content)})
    target = head.group(1).split()[1] if head.group(1).startswith("the ") else None
    first = target if target in present else (rng.choice(present) if present else None)
    others = [c for c in present if c != first]
    if first is None or not others:
        return None
    second = rng.choice(others)
    swap = {first: second, second: first}
    body = action.content[head.end() :]
    body = POINT_RE.sub(lambda m: f"{swap.get(m[1], m[1])} ({m[2]}, {m[3]})", body)
    return Action(action.actor, action.content[: head.end()] + body, action.tool, action.tool_args)


def wrong_tool_argument(action: Action, rng: random.Random) -> Action | None:
    """The intended frame (range) is right, the call's argument is a neighbouring value."""
    args = dict(action.tool_args or {})
    if action.tool == "detect_objects" and DETECT_RE.search(action.content):
        frame = int(args.get("frame", 0))
        args["frame"] = frame + 1 if frame == 0 else frame + rng.choice((-1, 1))
        return Action(action.actor, action.content, action.tool, args)
    if action.tool == "sample_frames" and FRAMES_RE.search(action.content):
        a, b, s = (int(args.get(k, 0)) for k in ("start", "end", "step"))
        options = [(a + d, b, s) for d in (-1, 1) if 0 <= a + d <= b]
        options += [(a, b + d, s) for d in (-1, 1) if b + d >= a]
        options += [(a, b, s + d) for d in (-1, 1) if s + d >= 1]
        a, b, s = rng.choice(options)
        return Action(action.actor, action.content, action.tool, {"start": a, "end": b, "step": s})
    return None


def wrong_subgoal(action: Action, rng: random.Random) -> Action | None:
    """Sampling or tracking a frame range that leaves out needed frames (stated and done)."""
    m = FRAMES_RE.search(action.content)
    is_order = action.tool is None and TRACK_RE.match(action.content)
    if m is None or not (action.tool == "sample_frames" or is_order):
        return None
    a, b, s = (int(v) for v in m.groups())
    frames = list(range(a, b + 1, s))
    if len(frames) < 2:
        return None
    a, b = rng.choice([(f, b) for f in frames[1:]] + [(a, f) for f in frames[:-1]])
    content = action.content[: m.start()] + frames_text(a, b, s) + action.content[m.end() :]
    args = {"start": a, "end": b, "step": s} if action.tool else action.tool_args
    return Action(action.actor, content, action.tool, args)


def _miscopy(number: str, rng: random.Random) -> str:
    """A copying slip of a coordinate: two digits transposed, else off by ten."""
    if len(number) == 2 and number[0] != number[1] and number[1] != "0":
        return number[::-1]
    value = int(number)
    return str(value + 10 if value < 10 or rng.random() < 0.5 else value - 10)


def _distorted_report(action: Action, head: re.Match, rng: random.Random) -> Action | None:
    """The tracker's report with the frames numbered from 1 (every label one too high),
    or with one coordinate of the tracked ball miscopied."""
    text = action.content
    if rng.random() < 0.5:
        body = re.sub(r"frame (\d+): ", lambda m: f"frame {int(m[1]) + 1}: ", text[head.end() :])
        return Action(action.actor, text[: head.end()] + body)
    target = head.group(1).split()[1] if head.group(1).startswith("the ") else None
    points = [m for m in POINT_RE.finditer(text) if target in (None, m[1])]
    if not points:
        return None
    m = rng.choice(points)
    k = rng.choice((2, 3))
    s, e = m.span(k)
    return Action(action.actor, text[:s] + _miscopy(m[k], rng) + text[e:])


def distorted_handoff(action: Action, rng: random.Random) -> Action | None:
    """A reported position (tracker) or the analyst's answer (to the verifier) passed on
    changed."""
    if action.tool is not None:
        return None
    head = REPORT_RE.match(action.content)
    if head:
        return _distorted_report(action, head, rng)
    m = TO_VERIFIER_RE.match(action.content)
    if not m:
        return None
    old = m[1]
    if old in PALETTE:
        new = rng.choice([c for c in PALETTE if c != old])
    elif old.isdigit():
        new = str(int(old) + (1 if old == "0" else rng.choice((-1, 1))))
    else:
        return None
    s, e = m.span(1)
    return Action(action.actor, action.content[:s] + new + action.content[e:])


POLICIES: dict[str, type] = {"react": EventReactSystem, "orchestrator": EventOrchestratorSystem}
"""System name -> this benchmark's scripted reference policy."""

OPERATORS = {
    "perception.misidentified_object": misidentified_object,
    "action.wrong_tool_argument": wrong_tool_argument,
    "planning.wrong_subgoal": wrong_subgoal,
    "coordination.distorted_handoff": distorted_handoff,
}
"""Taxonomy mode -> operator for sample_frames, detect_objects, final_answer and messages."""

PROMPTS: dict[str, dict[str, str]] = {
    "react": {
        "assistant": "You answer questions about a short video of bouncing balls. Use "
        "sample_frames to list and see frames, detect_objects to get each ball's colour and "
        "centre in a frame, and final_answer to answer.",
    },
    "orchestrator": {
        "orchestrator": "You coordinate: have the tracker track the balls over frame ranges, "
        "hand the question to the analyst, and pass the analyst's answer to the verifier.",
        "tracker": "You track balls with sample_frames and detect_objects over the frames you "
        "are given and report every detection to the orchestrator.",
        "analyst": "You answer the question from the tracker's reported detections, reasoning "
        "in your message, and end with 'Answer: <answer>.'",
        "verifier": "You recompute the answer from the tracker's detections; if it matches the "
        "analyst's, call final_answer, otherwise send it back to the orchestrator.",
    },
}
"""System name -> agent -> the role prompt an LLM playing that agent would get."""
