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

from whowhen.agents.scripted import ScriptedOrchestrator, ScriptedReact, addressee, tell
from whowhen.benchmarks.event_timing.actions import (
    ANSWER_RE,
    APPROVED,
    FRAMES_RE,
    REJECTED,
    TO_VERIFIER_RE,
    TRACK_RE,
    detect_action,
    detections_of,
    frames_text,
    listings_of,
    question_of,
    report_text,
    reported,
    sample_action,
    verdict_text,
)
from whowhen.benchmarks.event_timing.env import EventTimingEnv
from whowhen.benchmarks.event_timing.render import MAX_SPEED
from whowhen.benchmarks.event_timing.tasks import (
    COARSE,
    Detections,
    Spec,
    ball_in_zone,
    parse_task,
    summarize,
)
from whowhen.runtime import Action, Step

FINE = 2  # stride for line crossings


class EventReactSystem(ScriptedReact):
    """One agent: coarse-to-fine frame search for zone entries, every 2nd frame for lines."""

    def act(self, history: Sequence[Step]) -> Action:
        spec = parse_task(history[0].content)
        listings = listings_of(history, 0, "assistant")
        track = detections_of(history, 0, "assistant")
        last = spec.n_frames - 1
        if spec.kind == "cross":
            if not listings:
                why = (
                    f"To count the {spec.colour} ball's crossings of the line x = {spec.line} "
                    f"(a ball moves at most {MAX_SPEED} pixels per frame), "
                )
                return sample_action("assistant", why, 0, last, FINE)
            todo = [f for f in listings[0] if f not in track]
            if todo:
                return detect_action("assistant", todo[0], history)
            return self._recheck(history, spec, track, _crossing_frames(spec, track))
        who = f"the {spec.colour} ball" if spec.kind == "enter" else "a ball"
        if not listings:
            why = f"To find the first frame with {who} in the zone, "
            return sample_action("assistant", why, 0, last, COARSE)
        inside, before = None, None
        for frame in listings[0]:
            if frame not in track:
                return detect_action("assistant", frame, history)
            if ball_in_zone(spec, track[frame]):
                inside = frame
                break
            before = frame
        if inside is None or before is None or inside - before <= 1:
            return self._recheck(
                history, spec, track, [f for f in (before, inside) if f is not None]
            )
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
        first = inside
        for frame in listings[1]:
            if frame not in track:
                return detect_action("assistant", frame, history)
            if ball_in_zone(spec, track[frame]):
                first = frame
                break
        return self._recheck(history, spec, track, [first - 1, first])

    def _recheck(
        self, history: Sequence[Step], spec: Spec, track: Detections, frames: list[int]
    ) -> Action:
        """Detect each boundary frame the answer rests on a second time, then answer."""
        counts = Counter(
            s.tool_args.get("frame")
            for s in history
            if s.actor == "assistant" and s.tool == "detect_objects" and s.tool_args
        )
        for frame in frames:
            if counts[frame] == 1:
                return detect_action("assistant", frame, history, again=True)
        return self._final(spec, track)

    @staticmethod
    def _final(spec: Spec, track: Detections) -> Action:
        items, answer = summarize(spec, track)
        return Action(
            "assistant", verdict_text(spec, items, answer), "final_answer", {"answer": answer}
        )


def _crossing_frames(spec: Spec, track: Detections) -> list[int]:
    """The two frames around the asked ball's first crossing of the line (none: none)."""
    frames = sorted(f for f in track if spec.colour in track[f])
    for a, b in itertools.pairwise(frames):
        if (track[a][spec.colour][0] - spec.line) * (track[b][spec.colour][0] - spec.line) < 0:
            return [a, b]
    return []


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
            track = reported(history)
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
            f"{lead}Using the tracker's detections, answer: {question_of(history)}",
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
            items, answer = summarize(spec, reported(history))
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
        listings = listings_of(history, since, "tracker")
        if not listings:
            return sample_action("tracker", "", a, b, s)
        track = detections_of(history, since, "tracker")
        todo = [f for f in listings[0] if f not in track]
        if todo:
            return detect_action("tracker", todo[0], history)
        return tell("tracker", "orchestrator", report_text(what, listings[0], track))

    def verify(self, history: Sequence[Step]) -> Action:
        spec = parse_task(history[0].content)
        m = TO_VERIFIER_RE.match(history[-1].content) if history else None
        claimed = m.group(1) if m else "none"
        items, answer = summarize(spec, reported(history))
        if EventTimingEnv.score(claimed, answer):
            return Action(
                "verifier",
                APPROVED + verdict_text(spec, items, claimed),
                "final_answer",
                {"answer": claimed},
            )
        return tell("verifier", "orchestrator", REJECTED.format(answer=answer, claimed=claimed))


POLICIES: dict[str, type] = {"react": EventReactSystem, "orchestrator": EventOrchestratorSystem}
"""System name -> this benchmark's scripted reference policy."""
