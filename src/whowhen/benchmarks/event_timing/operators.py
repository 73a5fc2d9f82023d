"""Error operators for the event timing steps and messages, one per taxonomy mode.

Every replacement is built with the policies' own builders (`actions`) fed a wrong belief
(two balls taken for each other, a shorter video or gap, the detections so far taken for
all, a crossing missed), so the step's text and its action agree and the error shows only
against the frames or the history (issue 19: no step may contradict itself).

Dropped (mode, system) pairs, each because only a self-contradictory step could express it:
- action.wrong_tool_argument, react: every sample_frames and detect_objects step states the
  frames it asks for, so a mistyped argument contradicts its own text (and a frame range
  stated and sent alike is `wrong_subgoal`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

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
    detections_of,
    frames_text,
    listings_of,
    report_text,
    reported,
    verdict_text,
)
from whowhen.benchmarks.event_timing.render import PALETTE
from whowhen.benchmarks.event_timing.tasks import (
    Spec,
    parse_task,
    summarize,
)
from whowhen.runtime import Action, Step

# --- operators: one slip per taxonomy mode, in the policies' own templates ---------------


def _answer_of(about: str | None, items: dict[str, str]) -> str:
    """The answer per-ball values give, as `summarize` gives it from detections: the asked
    ball's value, or (`about` None: which ball first) the ball with the earliest frame."""
    if about is not None:
        return items.get(about, "none")
    entered = [(int(v), c) for c, v in items.items() if v != "none"]
    return min(entered)[1] if entered else "none"


def _exchanged(items: dict[str, str], a: str, b: str) -> dict[str, str]:
    """The per-ball values with balls `a` and `b` taken for each other."""
    return {c: items[b] if c == a else items[a] if c == b else v for c, v in items.items()}


def _with_values(action: Action, items: dict[str, str], about: str | None) -> Action | None:
    """A verdict step (react's answer, the analyst's message) restated over other per-ball
    values, with the answer they give: the policy's `verdict_text` wording, its tool."""
    summary, answer = SUMMARY_RE.search(action.content), ANSWER_RE.search(action.content)
    if summary is None or answer is None:
        return None
    new = _answer_of(about, items)
    listed = ", ".join(f"{c} {v}" for c, v in items.items())
    text = action.content
    text = text[: summary.start(2)] + listed + text[summary.end(2) : answer.start()]
    args = {"answer": new} if action.tool == "final_answer" else action.tool_args
    return Action(action.actor, f"{text}Answer: {new}.", action.tool, args)


@covers("react", "orchestrator")
def misidentified_object(action: Action, rng: random.Random) -> Action | None:
    """perception.misidentified_object: two balls are taken for each other, in a verdict
    (the asked ball, or for "which ball first" the earliest, with another ball: the values
    listed and the answer they give; react's answer or the analyst's message) or in the
    tracker's report (two balls' colours mixed up in every frame). Not the verifier's
    approval: a verifier that mixed up balls would reject, which the run recovers from."""
    if action.tool is None and REPORT_RE.match(action.content):
        return _swap_colours(action, rng)
    summary, answer = SUMMARY_RE.search(action.content), ANSWER_RE.search(action.content)
    if summary is None or answer is None or action.tool not in (None, "final_answer"):
        return None
    if action.content.startswith(APPROVED):
        return None
    items = dict(re.findall(r"(\w+) (\d+|none)", summary.group(2)))
    about_m = ABOUT_RE.search(action.content)
    about = about_m.group(1) if about_m else None
    old = _answer_of(about, items)
    target = about or old
    if target not in items or old != answer.group(1):
        return None
    others = [c for c in items if c != target]
    swaps = [c for c in others if _answer_of(about, _exchanged(items, target, c)) != old]
    if not swaps:
        return None
    return _with_values(action, _exchanged(items, target, rng.choice(swaps)), about)


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


@covers("react", "orchestrator")
def wrong_subgoal(action: Action, rng: random.Random) -> Action | None:
    """planning.wrong_subgoal: a frame range that leaves out needed frames, stated and sent
    alike: a first pass from frame 0 stops early (as if the video were shorter); a gap is
    narrowed at either end (the orchestrator's order, the tracker's sampling). Not react's
    gap step: its text names the frames the gap lies between."""
    m = FRAMES_RE.search(action.content)
    is_order = action.tool is None and TRACK_RE.match(action.content)
    if m is None or not (action.tool == "sample_frames" or is_order):
        return None
    if GAP_RE.search(action.content):
        return None
    a, b, s = (int(v) for v in m.groups())
    frames = list(range(a, b + 1, s))
    if len(frames) < 2:
        return None
    ranges = [(a, f) for f in frames[:-1]]
    if a > 0:
        ranges += [(f, b) for f in frames[1:]]
    a, b = rng.choice(ranges)
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


@covers("orchestrator")
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


def _spec(history: Sequence[Step]) -> Spec | None:
    """The task's spec from the visible history (None without an event timing task)."""
    try:
        return parse_task(history[0].content) if history else None
    except (AttributeError, ValueError):
        return None


@covers("react")
def premature_finish(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """The scan stopped early: instead of the next sample_frames/detect_objects call, the
    assistant answers from the detections so far (e.g. the coarse frame inside the zone,
    before the frames in between are checked), or the tracker reports the frames it has
    detected so far as if it were done."""
    is_scan = (action.tool == "sample_frames" and FRAMES_RE.search(action.content)) or (
        action.tool == "detect_objects" and DETECT_RE.search(action.content)
    )
    spec = _spec(history) if is_scan else None
    if spec is None:
        return None
    if action.actor == "tracker":
        return _early_report(history)
    track = detections_of(history, 0, action.actor)
    items, answer = summarize(spec, track)
    if (spec.kind == "cross" and len(track) < 2) or (spec.kind != "cross" and answer == "none"):
        return None  # nothing seen yet that an answer could rest on
    return Action(
        action.actor, verdict_text(spec, items, answer), "final_answer", {"answer": answer}
    )


def _early_report(history: Sequence[Step]) -> Action | None:
    """The tracker's report over the frames of its current order detected so far."""
    orders = [
        i for i, s in enumerate(history) if s.actor == "orchestrator" and addressee(s) == "tracker"
    ]
    if not orders:
        return None
    order = history[orders[-1]].content
    listings, what = listings_of(history, orders[-1], "tracker"), TRACK_RE.match(order)
    track = detections_of(history, orders[-1], "tracker")
    if not listings or not track or what is None:
        return None
    frames = [f for f in listings[0] if f in track]
    return tell("tracker", "orchestrator", report_text(what.group(1), frames, track))


@covers("react")
def miscount(action: Action, rng: random.Random) -> Action | None:
    """The asked ball's line crossings counted one too many or one too few (a crossing
    missed or counted twice), in the per-ball list and the answer alike (the assistant's
    final answer or the analyst's message)."""
    if action.tool not in (None, "final_answer") or not COUNT_RE.match(action.content):
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
    args = {"answer": new} if action.tool == "final_answer" else action.tool_args
    return Action(action.actor, text, action.tool, args)


@covers("orchestrator")
def false_approval(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """verification.false_approval: the verifier approves the analyst's answer it was about
    to send back, in its approval wording, with the per-ball values misread so that they
    give that answer (the asked ball's value read as the claimed one; for "which ball
    first", the claimed ball and the earliest taken for each other)."""
    m = REJECT_RE.match(action.content) if action.tool is None else None
    spec = _spec(history) if m and action.actor == "verifier" else None
    if spec is None:
        return None
    found, claimed = m.group(1), m.group(2)
    items, _ = summarize(spec, reported(history))
    about = None if spec.kind == "first" else spec.colour
    if about is not None:
        items = {**items, about: claimed}
    elif claimed in items and found in items:
        items = _exchanged(items, found, claimed)
    if _answer_of(about, items) != claimed:
        return None
    text = APPROVED + verdict_text(spec, items, claimed)
    return Action(action.actor, text, "final_answer", {"answer": claimed})


OPERATORS = {
    "perception.misidentified_object": misidentified_object,
    "planning.wrong_subgoal": wrong_subgoal,
    "coordination.distorted_handoff": distorted_handoff,
    "planning.premature_finish": premature_finish,
    "reasoning.miscount": miscount,
    "verification.false_approval": false_approval,
}
"""Taxonomy mode -> operator for sample_frames, detect_objects, final_answer and messages."""
