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

The wording the policies share (and parse back) is in `actions`, the operators in `operators`.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from whowhen.agents.scripted import ScriptedOrchestrator, ScriptedReact, addressee, tell
from whowhen.benchmarks.event_timing.actions import (
    ABOUT_RE,
    ANSWER_RE,
    APPROVED,
    FRAMES_RE,
    GAP_RE,
    REJECTED,
    TO_VERIFIER_RE,
    balls_of,
    balls_text,
    detect_action,
    detections_of,
    frames_text,
    listings_of,
    report_text,
    reported,
    sample_action,
    stated_balls,
    verdict_text,
    zone_balls,
)
from whowhen.benchmarks.event_timing.env import EventTimingEnv
from whowhen.benchmarks.event_timing.render import MAX_SPEED
from whowhen.benchmarks.event_timing.tasks import (
    COARSE,
    QUESTIONS,
    Detections,
    Spec,
    parse_task,
    summarize,
)
from whowhen.runtime import Action, Step

FINE = 2  # stride for line crossings


class EventReactSystem(ScriptedReact):
    """One agent: coarse-to-fine frame search for zone entries, every 2nd frame for lines.

    Its working belief is what its own steps said: the ball(s) it follows (named in every
    step, read back from the latest), and once it samples the frames between two coarse
    frames, the bracket its reason states (the last frame outside, the first inside and
    the ball(s) seen there). The answer is the one that belief gives."""

    def act(self, history: Sequence[Step]) -> Action:
        spec = parse_task(history[0].content)
        listings = listings_of(history, 0, "assistant")
        track = detections_of(history, 0, "assistant")
        stated = stated_balls(history, ("assistant",))
        last = spec.n_frames - 1
        if spec.kind == "cross":
            balls = stated or (spec.colour,)
            if not listings:
                why = (
                    f"To count the {spec.colour} ball's crossings of the line x = {spec.line} "
                    f"(a ball moves at most {MAX_SPEED} pixels per frame), "
                )
                return sample_action("assistant", why, 0, last, FINE)
            todo = [f for f in listings[0] if f not in track]
            if todo:
                return detect_action("assistant", todo[0], history, balls)
            frames = _crossing_frames(spec, track, balls[0])
            return self._recheck(history, spec, track, balls, frames, None)
        balls = stated if spec.kind == "first" else stated or (spec.colour,)
        if not listings:
            who = f"the {spec.colour} ball" if spec.kind == "enter" else "a ball"
            why = f"To find the first frame with {who} in the zone, "
            return sample_action("assistant", why, 0, last, COARSE)
        gap = stated_gap(history)
        if gap is None:
            inside, before = None, None
            for frame in listings[0]:
                if frame not in track:
                    return detect_action("assistant", frame, history, balls)
                if zone_balls(spec, track[frame], balls):
                    inside = frame
                    break
                before = frame
            if inside is None or before is None or inside - before <= 1:
                edges = [f for f in (before, inside) if f is not None]
                return self._recheck(history, spec, track, balls, edges, inside)
            return gap_action(spec, before, inside, zone_balls(spec, track[inside], balls))
        before, inside = gap
        first = inside
        for frame in listings[1] if len(listings) > 1 else ():
            if frame not in track:
                return detect_action("assistant", frame, history, balls)
            if zone_balls(spec, track[frame], balls):
                first = frame
                break
        return self._recheck(history, spec, track, balls, [first - 1, first], first, gap)

    def _recheck(
        self,
        history: Sequence[Step],
        spec: Spec,
        track: Detections,
        balls: tuple[str, ...] | None,
        frames: list[int],
        first: int | None,
        bracket: tuple[int, int] | None = None,
    ) -> Action:
        """Detect each boundary frame the answer rests on a second time, then answer."""
        counts = Counter(
            s.tool_args.get("frame")
            for s in history
            if s.actor == "assistant" and s.tool == "detect_objects" and s.tool_args
        )
        for frame in frames:
            if counts[frame] == 1:
                return detect_action("assistant", frame, history, balls, again=True)
        return final_action(spec, track, balls, first, bracket)


def stated_gap(history: Sequence[Step]) -> tuple[int, int] | None:
    """(last frame outside, first frame inside) as the latest gap reason states them."""
    for step in reversed(history):
        if step.actor == "assistant" and step.tool == "sample_frames":
            m = GAP_RE.match(step.content)
            if m:
                if m["ball"]:
                    return int(m["before"]), int(m["inside"])
                return int(m["none"]), int(m["seen"])
    return None


def gap_action(spec: Spec, before: int, inside: int, balls: Sequence[str]) -> Action:
    """Sample the frames between the last coarse frame outside and the first inside, the
    reason naming the ball(s) seen inside (the belief the next steps follow)."""
    if spec.kind == "first":
        verb = "is" if len(balls) == 1 else "are"
        why = (
            f"No ball is in the zone in frame {before} and {balls_text(balls)} {verb} in "
            f"frame {inside}, so "
        )
    else:
        why = (
            f"The {balls[0]} ball is outside the zone in frame {before} and inside in "
            f"frame {inside}, so "
        )
    return sample_action("assistant", why, before + 1, inside - 1, 1)


def final_action(
    spec: Spec,
    track: Detections,
    balls: tuple[str, ...] | None,
    first: int | None,
    bracket: tuple[int, int] | None = None,
) -> Action:
    """The answer the belief gives: crossings of the followed ball over the detections; for
    a zone, the first frame inside of the followed ball(s) (see `belief_values`)."""
    if spec.kind == "cross":
        asked = replace(spec, colour=balls[0])
        items, answer = summarize(asked, track)
    else:
        asked = replace(spec, colour=balls[0]) if spec.kind == "enter" else spec
        items = belief_values(spec, track, balls, first, bracket)
        answer = answer_of(None if spec.kind == "first" else asked.colour, items)
    return Action(
        "assistant", verdict_text(asked, items, answer), "final_answer", {"answer": answer}
    )


def belief_values(
    spec: Spec,
    track: Detections,
    balls: Sequence[str] | None,
    first: int | None,
    bracket: tuple[int, int] | None,
) -> dict[str, str]:
    """Per followed ball, its first frame inside as the agent believes it: for the asked
    ball, the frame the search ended on; for the ball(s) the gap reason saw inside, the
    first frame of the gap detected inside, else the frame the reason names. Without a
    followed ball ("which first" before any was seen), the detections of every ball."""
    if spec.kind == "enter":
        return {balls[0]: "none" if first is None else str(first)}
    if not balls or bracket is None:
        return summarize(spec, track)[0]
    before, inside = bracket
    items: dict[str, str] = {}
    for colour in balls:
        seen = [f for f in sorted(track) if before < f < inside and colour in track[f]]
        seen = [f for f in seen if zone_balls(spec, track[f], (colour,))]
        items[colour] = str(seen[0] if seen else inside)
    return items


def answer_of(about: str | None, items: dict[str, str]) -> str:
    """The answer per-ball values give: the asked ball's value, or (`about` None: which
    ball first) the ball with the earliest frame."""
    if about is not None:
        return items.get(about, "none")
    entered = [(int(v), c) for c, v in items.items() if v != "none"]
    return min(entered)[1] if entered else "none"


def _crossing_frames(spec: Spec, track: Detections, colour: str) -> list[int]:
    """The two frames around the ball's first crossing of the line (none: none)."""
    frames = sorted(f for f in track if colour in track[f])
    for a, b in itertools.pairwise(frames):
        if (track[a][colour][0] - spec.line) * (track[b][colour][0] - spec.line) < 0:
            return [a, b]
    return []


class EventOrchestratorSystem(ScriptedOrchestrator):
    """Orchestrator, tracker (tools), analyst (reasons in its message), verifier.

    The ball(s) to follow travel with the messages: the orchestrator's orders name them,
    the tracker's steps and report restate them, the orchestrator restates the question
    for the analyst, and its hand-off to the verifier names the ball the analyst answered
    about; each agent reads them from the latest message it got (or its own last step).
    The verifier recomputes the answer about that ball from the tracker's reports."""

    agents = ("orchestrator", "tracker", "analyst", "verifier")

    def orchestrate(self, history: Sequence[Step]) -> Action:
        spec = parse_task(history[0].content)
        mine = [s for s in history if s.actor == "orchestrator" and s.kind == "message"]
        handoffs = [s for s in mine if s.content.startswith("To tracker:")]
        if not handoffs:
            what = f"the {spec.colour} ball" if spec.kind != "first" else "all balls"
            stride = FINE if spec.kind == "cross" else COARSE
            return self._track(what, 0, spec.n_frames - 1, stride)
        balls = stated_balls(history, ("orchestrator",))
        last = [s for s in history if s.is_agent_step][-1]
        if last.actor == "analyst":
            m = ANSWER_RE.search(last.content)
            about = ABOUT_RE.search(last.content)
            ball = f"about the {about.group(1)} ball " if about else ""
            return tell(
                "orchestrator",
                "verifier",
                f"The analyst's answer {ball}is {m.group(1) if m else 'none'}. Please check "
                "it against the tracker's detections.",
            )
        if last.actor == "tracker" and spec.kind != "cross" and len(handoffs) == 1:
            track = reported(history)
            frames = sorted(track)
            inside = next((f for f in frames if zone_balls(spec, track[f], balls)), None)
            if inside is not None and frames.index(inside) > 0:
                before = frames[frames.index(inside) - 1]
                if inside - before > 1:
                    return self._track(balls_text(balls), before + 1, inside - 1, 1)
        lead = ""
        if last.actor == "verifier":
            lead = "The verifier disagrees with the answer. "
        question = QUESTIONS[spec.kind].format(
            colour=balls[0] if balls else spec.colour, line=spec.line
        )
        return tell(
            "orchestrator", "analyst", f"{lead}Using the tracker's detections, answer: {question}"
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
            asked = _asked(spec, history)
            items, answer = summarize(asked, reported(history))
            return tell("analyst", "orchestrator", verdict_text(asked, items, answer))
        since = max(
            i
            for i, s in enumerate(history)
            if s.actor == "orchestrator" and addressee(s) == "tracker"
        )
        order = history[since].content
        m = FRAMES_RE.search(order)
        a, b, s = (int(v) for v in m.groups()) if m else (0, spec.n_frames - 1, COARSE)
        balls = stated_balls(history, ("orchestrator", "tracker"), since)
        what = balls_text(balls)
        listings = listings_of(history, since, "tracker")
        if not listings:
            return sample_action("tracker", f"To track {what}, ", a, b, s)
        track = detections_of(history, since, "tracker")
        todo = [f for f in listings[0] if f not in track]
        if todo:
            return detect_action("tracker", todo[0], history, balls)
        return tell("tracker", "orchestrator", report_text(what, listings[0], track))

    def verify(self, history: Sequence[Step]) -> Action:
        spec = parse_task(history[0].content)
        m = TO_VERIFIER_RE.match(history[-1].content) if history else None
        claimed = m["answer"] if m else "none"
        asked = replace(spec, colour=m["ball"]) if m and m["ball"] else spec
        items, answer = summarize(asked, reported(history))
        if EventTimingEnv.score(claimed, answer):
            return Action(
                "verifier",
                APPROVED + verdict_text(asked, items, claimed),
                "final_answer",
                {"answer": claimed},
            )
        return tell("verifier", "orchestrator", REJECTED.format(answer=answer, claimed=claimed))


def _asked(spec: Spec, history: Sequence[Step]) -> Spec:
    """The question as the orchestrator last put it to the analyst (its ball)."""
    for step in reversed(history):
        if step.actor == "orchestrator" and addressee(step) == "analyst":
            balls = balls_of(step.content)
            if balls:
                return replace(spec, colour=balls[0])
            break
    return spec


POLICIES: dict[str, type] = {"react": EventReactSystem, "orchestrator": EventOrchestratorSystem}
"""System name -> this benchmark's scripted reference policy."""
