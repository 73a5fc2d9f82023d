"""An injected event timing step must not contradict itself. `contradiction`
reads ONE step (its text, tool and arguments) and says what in it disagrees; it must pass
every step of the slip-free reference rollouts and every replacement the package's
operators make, and it must catch the step-only contradictions the audit found."""

from __future__ import annotations

import re

import pytest

from whowhen.benchmarks.event_timing.actions import DETECTS, RECHECKS
from whowhen.benchmarks.event_timing.operators import OPERATORS
from whowhen.runtime import Action

from .coherence_checks import direct_test, planned_test, reference_test

BENCHMARK = "event_timing"
SYSTEMS = ("react", "orchestrator")
_TO = re.compile(r"^To (\w+): ")
_SAMPLE = re.compile(r"^(?P<why>.*)I will look at frames (\d+) to (\d+) with step (\d+)\.$")
_WHY = [
    re.compile(r"^$"),
    re.compile(r"^To track (the \w+ ball|all balls), $"),
    re.compile(r"^To find the first frame with (the \w+ ball|a ball) in the zone, $"),
    re.compile(
        r"^To count the \w+ ball's crossings of the line x = \d+ \(a ball moves at most "
        r"\d+ pixels per frame\), $"
    ),
]
_GAP = re.compile(
    r"^(?:The \w+ ball is outside the zone in frame (\d+) and inside in frame (\d+)|No ball "
    r"is in the zone in frame (\d+) and (?:the \w+ ball is|the [\w, ]+ and \w+ balls are) in "
    r"frame (\d+)), so $"
)
_DETECTS = [
    re.compile(
        "^"
        + re.escape(v)
        .replace(re.escape("{frame}"), r"(?P<frame>\d+)", 1)
        .replace(re.escape("{frame}"), "(?P=frame)")
        .replace(re.escape("{balls}"), r"(?:the \w+ ball|the [\w, ]+ and \w+ balls|all balls)")
        + "$"
    )
    for v in (*DETECTS, *RECHECKS)
]


def _detect(text: str) -> re.Match[str] | None:
    """A detect step's text in any of the policies' wordings (the frame named)."""
    return next((m for rx in _DETECTS if (m := rx.match(text))), None)


_VERDICT = re.compile(
    r"^(?P<approved>The analyst's answer matches the tracker's detections\. )?"
    r"(?P<what>First frame inside the zone|Crossings of the line x = \d+) in the detections: "
    r"(?P<items>.+?)\. (?:The question is about the (?P<about>\w+) ball\. )?"
    r"Answer: (?P<answer>\w+)\.$"
)
_REJECT = re.compile(r"^The tracker's detections give (\w+), not (\w+)\. ")


def _verdict(m: re.Match) -> str | None:
    """What is wrong with a verdict: the answer must be the one its own per-ball values
    give (the asked ball's value; for "which ball first", the earliest ball)."""
    if m["items"] == "no balls":
        items: dict[str, str] = {}
    else:
        pairs = [item.split(" ") for item in m["items"].split(", ")]
        if any(len(p) != 2 for p in pairs):
            return "a verdict that is not in the policy's form"
        items = dict(pairs)
    if m["what"].startswith("Crossings") and (m["about"] is None or "none" in items.values()):
        return "a verdict that is not in the policy's form"
    if m["about"] is not None:
        given = items.get(m["about"], "none")
    else:
        entered = [(int(v), c) for c, v in items.items() if v != "none"]
        given = min(entered)[1] if entered else "none"
    if given != m["answer"]:
        return f"the values listed give {given}, the step answers {m['answer']}"
    return None


def contradiction(action: Action) -> str | None:
    """What in this one step contradicts itself (None: nothing), from its text, tool and
    arguments alone: the tool against the one its text announces, the frames its text
    names against the call's arguments (and, for a gap, against the frames its reason
    names), the answer against the per-ball values it lists and against the one it
    submits; a text the policies never write is flagged too."""
    text = _TO.sub("", action.content)
    args = action.tool_args or {}
    sample, detect, verdict = _SAMPLE.match(text), _detect(text), _VERDICT.match(text)
    if bool(sample) != (action.tool == "sample_frames"):
        return f"the text and the tool disagree ({action.tool} called)"
    if bool(detect) != (action.tool == "detect_objects"):
        return f"the text and the tool disagree ({action.tool} called)"
    if sample:
        a, b, s = (int(v) for v in sample.groups()[1:])
        if (args.get("start"), args.get("end"), args.get("step")) != (a, b, s):
            return f"the text looks at frames {a} to {b} step {s}, the call sends {args}"
        gap = _GAP.match(sample["why"])
        if gap:
            before, inside = (int(v) for v in gap.groups() if v is not None)
            if (a, b, s) != (before + 1, inside - 1, 1):
                return f"the reason names the gap {before}..{inside}, the step looks at {a}..{b}"
        elif not any(w.match(sample["why"]) for w in _WHY):
            return "a sampling reason the policies never write"
        return None
    if detect:
        frame = int(detect["frame"])
        return None if args.get("frame") == frame else f"frame {frame} said, {args} sent"
    if verdict:
        if action.tool == "final_answer" and str(args.get("answer")) != verdict["answer"]:
            return f"the text answers {verdict['answer']}, the call submits {args}"
        if bool(verdict["approved"]) != (action.actor == "verifier"):
            return "a verdict that is not in the policy's form"
        return _verdict(verdict)
    if action.tool == "final_answer":
        return "a final answer that gives no verdict"
    reject = _REJECT.match(text)
    if reject and reject[1] == reject[2]:
        return f"the check finds {reject[1]} and rejects {reject[2]}"
    return None


test_no_reference_step_is_flagged = reference_test(BENCHMARK, SYSTEMS, contradiction)
test_no_planned_replacement_is_flagged = planned_test(BENCHMARK, SYSTEMS, OPERATORS, contradiction)
test_no_operator_output_is_flagged = direct_test(BENCHMARK, SYSTEMS, OPERATORS, contradiction)


ENTER = "First frame inside the zone in the detections: red 14, yellow 9."
CONTRADICTORY = [
    # the frame the text names is not the one the call asks for
    Action("assistant", "I will detect the objects in frame 12.", "detect_objects", {"frame": 13}),
    Action(
        "assistant",
        "To find the first frame with the red ball in the zone, I will look at "
        "frames 0 to 24 with step 4.",
        "sample_frames",
        {"start": 0, "end": 24, "step": 3},
    ),
    # the gap the reason names is not the range looked at
    Action(
        "assistant",
        "The red ball is outside the zone in frame 12 and inside in frame 16, "
        "so I will look at frames 14 to 15 with step 1.",
        "sample_frames",
        {"start": 14, "end": 15, "step": 1},
    ),
    # another ball's value given for the asked one, the per-ball values unchanged
    Action(
        "assistant",
        f"{ENTER} The question is about the red ball. Answer: 9.",
        "final_answer",
        {"answer": "9"},
    ),
    Action(
        "analyst",
        "To orchestrator: First frame inside the zone in the detections: red 14, "
        "yellow 9. Answer: red.",
    ),
    # an approval whose own values give another answer than the one approved
    Action(
        "verifier",
        f"The analyst's answer matches the tracker's detections. {ENTER} The "
        "question is about the red ball. Answer: 16.",
        "final_answer",
        {"answer": "16"},
    ),
    # the text answers one thing, the call submits another
    Action(
        "assistant",
        f"{ENTER} The question is about the red ball. Answer: 14.",
        "final_answer",
        {"answer": "41"},
    ),
    # the text announces one tool, another is called
    Action("assistant", "I will detect the objects in frame 12.", "final_answer", {"answer": "12"}),
]


@pytest.mark.parametrize("action", CONTRADICTORY, ids=range(len(CONTRADICTORY)))
def test_the_check_flags_a_contradictory_step(action: Action) -> None:
    assert contradiction(action)
