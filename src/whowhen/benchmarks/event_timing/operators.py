"""Error operators for the event timing steps and messages, one per taxonomy mode.

Every replacement is built with the policies' own builders (`actions`, `policies`) fed a
wrong belief (one ball taken for another, a shorter video or gap, the detections so far
taken for all, a crossing missed, a report copied wrong), so the step's text and its action
agree and the error shows only against the frames or the history (no step may
contradict itself). Each step names the ball(s) it follows and the next steps read that
belief back, so an error at any kind of step reaches the answer (`targets`).

Dropped (mode, system) pairs, each because only a self-contradictory step could express it:
- action.wrong_tool_argument, react: every sample_frames and detect_objects step states the
  frames it asks for, so a mistyped argument contradicts its own text (and a frame range
  stated and sent alike is `wrong_subgoal`).
Kept although the verifier catches them (it recomputes "which ball first" from the
tracker's reports, so the run recovers): the analyst's "which first" verdict with two balls
mixed up and its hand-off to the verifier with another colour. They are the recoveries the
slip model needs for `false_approval` to have a rejection to take back.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import replace

from whowhen.agents.scripted import addressee, tell
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.event_timing.actions import (
    ABOUT_RE,
    ANSWER_RE,
    APPROVED,
    COUNT_RE,
    DETECT_RE,
    FRAMES_RE,
    GAP_RE,
    POINT_RE,
    REJECT_RE,
    REPORT_RE,
    SUMMARY_RE,
    TO_VERIFIER_RE,
    TRACK_RE,
    balls_of,
    detections_of,
    frames_text,
    listings_of,
    report_text,
    reported,
    stated_balls,
    verdict_text,
    zone_balls,
)
from whowhen.benchmarks.event_timing.policies import final_action, gap_action, stated_gap
from whowhen.benchmarks.event_timing.targets import (
    report_answer,
    spec_of,
    swapped_report,
    switched_first,
    switched_handoff,
    switched_order,
    switched_report,
    switched_step,
    switched_verdict,
)
from whowhen.benchmarks.event_timing.tasks import COARSE, Spec, summarize
from whowhen.runtime import Action, Step

# --- operators: one slip per taxonomy mode, in the policies' own templates ---------------


@covers("react", "orchestrator")
def misidentified_object(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """perception.misidentified_object: another ball taken for the followed one, in any
    step that names it (see `targets`), or two balls' colours mixed up in a report of all
    balls; the later steps follow the ball this step names."""
    for op in (switched_step, switched_report, swapped_report, switched_verdict, switched_first):
        new = op(action, rng, history)
        if new is not None and new != action:
            return new
    return None


@covers("react", "orchestrator")
def wrong_subgoal(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """planning.wrong_subgoal: a frame range that leaves out needed frames, stated and sent
    alike: a first pass from frame 0 stops early (as if the video were shorter); a gap is
    narrowed at either end (the orchestrator's order, the tracker's sampling); react looks
    between the wrong two coarse frames (its reason names that bracket, which it then
    believes)."""
    m = FRAMES_RE.search(action.content)
    is_order = action.tool is None and TRACK_RE.match(action.content)
    if m is None or not (action.tool == "sample_frames" or is_order):
        return None
    if GAP_RE.match(action.content):
        return _wrong_gap(action, history)
    a, b, s = (int(v) for v in m.groups())
    spec = spec_of(history)
    if a > 0 and spec is not None and spec.kind == "first":
        return None  # "which first" is settled by the coarse frames: the gap only confirms
    frames = list(range(a, b + 1, s))
    # stops well short; never a one-frame range ("frames 0 to 0"), which no plan asks for
    # and which gave the step away on its own
    ranges = [(a, f) for f in frames[1 : max(2, len(frames) // 2)] if f < b]
    if a > 0:
        ranges += [(f, b) for f in frames[1:-1]]
    if not ranges:
        return None
    a, b = rng.choice(ranges)
    content = action.content[: m.start()] + frames_text(a, b, s) + action.content[m.end() :]
    args = {"start": a, "end": b, "step": s} if action.tool else action.tool_args
    return Action(action.actor, content, action.tool, args)


def _wrong_gap(action: Action, history: Sequence[Step]) -> Action | None:
    """React's gap step between the next two coarse frames (or, at the end of the video,
    the previous two): the same reason, about another bracket."""
    gap, spec = GAP_RE.match(action.content), spec_of(history)
    balls = balls_of(action.content)
    if gap is None or spec is None or not balls or spec.kind == "first":
        return None  # which ball was seen first does not depend on the bracket
    before = int(gap["before"] or gap["none"])
    inside = int(gap["inside"] or gap["seen"])
    if inside + COARSE <= spec.n_frames - 1:
        return gap_action(spec, inside, inside + COARSE, balls)
    if before - COARSE >= 0:
        return gap_action(spec, before - COARSE, before, balls)
    return None


def _miscopy(number: str, rng: random.Random) -> str:
    """A copying slip of a coordinate: two digits transposed, else off by ten."""
    if len(number) == 2 and number[0] != number[1] and number[1] != "0":
        return number[::-1]
    value = int(number)
    return str(value + 10 if value < 10 or rng.random() < 0.5 else value - 10)


def _distorted_report(
    action: Action, head: re.Match, rng: random.Random, history: Sequence[Step]
) -> Action | None:
    """The tracker's report with the frames numbered from 1 (every label one too high), or
    with one coordinate miscopied: of those copies, one that changes what the reports give
    (a copy that changes nothing would not be a decisive error)."""
    text = action.content
    balls = balls_of(head.group(1))
    ball = balls[0] if balls else None
    body = re.sub(r"frame (\d+): ", lambda m: f"frame {int(m[1]) + 1}: ", text[head.end() :])
    copies = [Action(action.actor, text[: head.end()] + body)]
    for m in POINT_RE.finditer(text, head.end()):
        for k in (2, 3):
            s, e = m.span(k)
            copies.append(Action(action.actor, text[:s] + _miscopy(m[k], rng) + text[e:]))
    old = report_answer(history, action, ball)
    decisive = [c for c in copies if report_answer(history, c, ball) != old]
    return rng.choice(decisive) if decisive else None


@covers("orchestrator")
def distorted_handoff(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """A message passed on changed: the tracker's report copied wrong (frame labels or a
    position), the orchestrator's order or question about another ball, or its hand-off
    to the verifier about another ball (see `targets`)."""
    if action.tool is not None or spec_of(history) is None:
        return None
    head = REPORT_RE.match(action.content)
    if head and action.actor == "tracker":
        return _distorted_report(action, head, rng, history)
    return switched_order(action, rng, history) or switched_handoff(action, rng, history)


@covers("react", "orchestrator")
def premature_finish(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """The scan stopped early: instead of the next sample_frames/detect_objects call, the
    assistant answers from its belief so far (e.g. the coarse frame inside the zone, before
    the frames in between are checked), or the tracker reports the frames it has detected
    so far as if it were done."""
    is_scan = (action.tool == "sample_frames" and FRAMES_RE.search(action.content)) or (
        action.tool == "detect_objects" and DETECT_RE.search(action.content)
    )
    spec = spec_of(history) if is_scan else None
    if spec is None:
        return None
    if action.actor == "tracker":
        return _early_report(history, spec)
    if action.actor != "assistant":
        return None
    track = detections_of(history, 0, action.actor)
    listings = listings_of(history, 0, action.actor)
    balls = stated_balls(history, ("assistant",))
    if spec.kind == "cross":
        if len(track) < 2 or not listings or set(listings[0]) <= set(track):
            return None  # nothing seen yet to answer from, or nothing left to see
        return final_action(spec, track, balls or (spec.colour,), None)
    if not track:
        return None  # nothing seen yet that an answer could rest on
    if spec.kind == "enter":
        balls = balls or (spec.colour,)
    bracket = stated_gap(history)
    inside = [f for f in sorted(track) if zone_balls(spec, track[f], balls)]
    if bracket is not None:
        if any(bracket[0] < f < bracket[1] for f in inside) or len(listings) < 2:
            return None  # the gap's first frame inside is found: the answer is right
        if set(listings[1]) <= set(track):
            return None
        inside = [bracket[1]]
    elif inside and inside[0] - max((f for f in track if f < inside[0]), default=-9) <= 1:
        return None
    if not inside:
        return final_action(spec, track, balls, None)  # no ball seen inside yet: none
    if spec.kind == "first" and not balls:
        before = max((f for f in track if f < inside[0]), default=-1)
        balls, bracket = zone_balls(spec, track[inside[0]], None), (before, inside[0])
    return final_action(spec, track, balls, inside[0], bracket)


def _early_report(history: Sequence[Step], spec: Spec) -> Action | None:
    """The tracker's report over the frames of its current order detected so far, while
    the event it is looking for is not among them yet (after it, the rest adds nothing)."""
    orders = [
        i for i, s in enumerate(history) if s.actor == "orchestrator" and addressee(s) == "tracker"
    ]
    if not orders:
        return None
    listings = listings_of(history, orders[-1], "tracker")
    track = detections_of(history, orders[-1], "tracker")
    balls = stated_balls(history, ("orchestrator", "tracker"), orders[-1])
    if not listings or not track or balls is None:
        return None
    frames = [f for f in listings[0] if f in track]
    if spec.kind != "cross" and any(zone_balls(spec, track[f], balls) for f in frames):
        return None
    what = "all balls" if not balls else f"the {balls[0]} ball"
    return tell("tracker", "orchestrator", report_text(what, frames, track))


@covers("react")
def miscount(action: Action, rng: random.Random) -> Action | None:
    """The asked ball's line crossings counted one too many or one too few (a crossing
    missed or counted twice), in the per-ball list and the answer alike (the assistant's
    final answer; the analyst's count the verifier recomputes, so it is not injected)."""
    if action.tool != "final_answer" or not COUNT_RE.match(action.content):
        return None
    summary, answer = SUMMARY_RE.search(action.content), ANSWER_RE.search(action.content)
    about = ABOUT_RE.search(action.content)
    if summary is None or answer is None or about is None:
        return None
    items = dict(re.findall(r"(\w+) (\d+|none)", summary.group(2)))
    old = items.get(about.group(1), "")
    if not old.isdigit() or old != answer.group(1):
        return None
    count = int(old)
    new = str(count + 1 if count == 0 or rng.random() < 0.5 else count - 1)
    items[about.group(1)] = new
    listed = ", ".join(f"{c} {v}" for c, v in items.items())
    text = action.content
    text = text[: summary.start(2)] + listed + text[summary.end(2) : answer.start()]
    text += f"Answer: {new}."
    return Action(action.actor, text, action.tool, {"answer": new})


@covers("orchestrator")
def false_approval(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """verification.false_approval: the verifier approves the analyst's answer it was about
    to send back, in its approval wording, with the per-ball values misread so that they
    give that answer (the asked ball's value read as the claimed one; for "which ball
    first", the claimed ball and the earliest taken for each other)."""
    m = REJECT_RE.match(action.content) if action.tool is None else None
    spec = spec_of(history) if m and action.actor == "verifier" else None
    if spec is None:
        return None
    found, claimed = m.group(1), m.group(2)
    handoff = TO_VERIFIER_RE.match(history[-1].content) if history else None
    asked = replace(spec, colour=handoff["ball"]) if handoff and handoff["ball"] else spec
    items, _ = summarize(asked, reported(history))
    about = None if spec.kind == "first" else asked.colour
    if about is not None:
        items = {**items, about: claimed}
    elif claimed in items and found in items:
        items = {
            c: items[found] if c == claimed else items[claimed] if c == found else v
            for c, v in items.items()
        }
    entered = [(int(v), c) for c, v in items.items() if v != "none"]
    given = items.get(about, "none") if about else (min(entered)[1] if entered else "none")
    if given != claimed:
        return None
    text = APPROVED + verdict_text(asked, items, claimed)
    return Action(action.actor, text, "final_answer", {"answer": claimed})


@covers("orchestrator")
def ignored_message(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """coordination.ignored_message: the tracker answers the orchestrator's second order
    (the frames between two coarse frames) as if it had not been sent, reporting the
    detections of the first order again; the answer then rests on the coarse frames."""
    spec = spec_of(history)
    if action.actor != "tracker" or action.tool is not None or spec is None:
        return None
    if spec.kind == "first":
        return None  # the gap only confirms which ball the coarse frames saw first
    orders = [
        i for i, s in enumerate(history) if s.actor == "orchestrator" and addressee(s) == "tracker"
    ]
    if len(orders) < 2 or not REPORT_RE.match(action.content):
        return None
    earlier = [
        s
        for s in history[: orders[-1]]
        if s.actor == "tracker" and s.kind == "message" and REPORT_RE.match(s.content)
    ]
    if not earlier:
        return None
    return tell("tracker", "orchestrator", earlier[-1].content.split(": ", 1)[1])


OPERATORS = {
    "perception.misidentified_object": misidentified_object,
    "planning.wrong_subgoal": wrong_subgoal,
    "coordination.distorted_handoff": distorted_handoff,
    "coordination.ignored_message": ignored_message,
    "planning.premature_finish": premature_finish,
    "reasoning.miscount": miscount,
    "verification.false_approval": false_approval,
}
"""Taxonomy mode -> operator for sample_frames, detect_objects, final_answer and messages."""
