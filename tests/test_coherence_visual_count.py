"""An injected visual counting step must not contradict itself. `contradiction`
reads ONE step (its text, tool and arguments) and says what in it disagrees; it must pass
every step of the slip-free reference rollouts and every replacement the package's
operators make, and it must catch the step-only contradictions the audit found."""

from __future__ import annotations

import re

import pytest

from whowhen.benchmarks.visual_count.operators import OPERATORS
from whowhen.benchmarks.visual_count.phrases import (
    ANSWER_FORMS,
    ASKED_FORMS,
    COLOUR_FORMS,
    FULL,
    FULL_FORMS,
    NOTE_FORMS,
    TALLY_FORMS,
    TARGET_FORMS,
)
from whowhen.runtime import Action

from .coherence_checks import direct_test, planned_test, reference_test

BENCHMARK = "visual_count"
SYSTEMS = ("react",)
_ITEM = re.compile(r"^(\d+) (\w+) (circle|square|triangle)(s?)$")
_REGION = re.compile(r"\b([a-z]+-(?:left|centre|right))\b")
_COLOUR = re.compile(r"(?:colour pass for|detection of the|a) (\w+)(?: objects|-only)")


def _tally(text: str) -> dict[tuple[str, str], int] | str:
    """The tally a step writes, or what in it the policy never writes."""
    tally: dict[tuple[str, str], int] = {}
    for item in text.split(", ") if text != "nothing" else []:
        part = _ITEM.match(item)
        if part is None:
            return f"a tally entry the policy never writes: {item!r}"
        n, colour, shape, plural = int(part[1]), part[2], part[3], part[4]
        if n < 1 or (n == 1) == bool(plural) or (colour, shape) in tally:
            return f"a tally entry the policy never writes: {item!r}"
        tally[(colour, shape)] = n
    return tally


def _targets(text: str) -> str | None:
    """The step names one class as the one it counts, and a count of it agrees in number
    with its noun ("1 green circle", "2 green circles")."""
    found = [m for forms in TARGET_FORMS for m in forms.finditer(text)]
    named = {(m["colour"], m["shape"]) for m in found}
    if len(named) > 1:
        return f"the text counts two classes at once: {sorted(named)}"
    for m in found:
        if "running" in m.re.groupindex and (int(m["count"]) == 1) == m["running"].endswith("s"):
            return f"a count the policy never writes: {m['running']!r}"
    return None


def _detect_step(action: Action) -> str | None:
    """A detect call: its text announces the pass it makes (the full image, a region, a
    colour), names one class as the one it counts, and any region note in it is a
    well-formed tally."""
    args = action.tool_args or {}
    text = action.content
    for note in NOTE_FORMS.finditer(text):
        bad = _tally(note["tally"])
        if isinstance(bad, str):
            return bad
    bad_target = _targets(text)
    if bad_target:
        return bad_target
    if not args:
        full = FULL_FORMS.search(text)
        if full is None or full.group(0) != text:
            return "a full detection pass the text does not announce"
        return None
    if set(args) == {"region"}:
        named = _REGION.findall(text) or ["no region"]
        if named[-1] != args["region"]:
            return f"the text moves to {named[-1]}, the call scans {args['region']}"
        return None
    if set(args) == {"colour"}:
        named = _COLOUR.findall(text)
        if not named or named[-1] != args["colour"]:
            return f"the text announces a {named} pass, the call filters {args['colour']}"
        total = COLOUR_FORMS.search(text)
        if total is not None and total["colour"] != args["colour"]:
            return f"the text totals {total['colour']} objects, the call filters {args['colour']}"
        return None
    return f"arguments the policy never sends: {args}"


def contradiction(action: Action) -> str | None:
    """What in this one step contradicts itself (None: nothing), from its text, tool and
    arguments alone: the tool against the one its text announces, the pass a detect call
    makes against the one its text announces, the count it states for the asked class
    against its own tally, the answer its text gives against the one it submits; a text
    the policy never writes is flagged too."""
    answers = ANSWER_FORMS.search(action.content)
    if bool(answers) != (action.tool == "final_answer"):
        return f"the text and the tool disagree ({action.tool} called)"
    if action.tool == "detect_objects":
        return _detect_step(action)
    if action.tool != "final_answer":
        return None
    tally_m, asked = TALLY_FORMS.search(action.content), ASKED_FORMS.search(action.content)
    if tally_m is None or asked is None or answers is None:
        return "a final answer that is not in the policy's form"
    submitted = str((action.tool_args or {}).get("answer"))
    if submitted != answers["count"]:
        return f"the text answers {answers['count']}, the call submits {submitted}"
    if asked["count"] != answers["count"]:
        return f"the text counts {asked['count']} but answers {answers['count']}"
    tally = _tally(tally_m["tally"])
    if isinstance(tally, str):
        return tally
    shape = None if asked["shape"] == "object" else asked["shape"]
    colour = asked["colour"]
    total = sum(n for (c, s), n in tally.items() if c == colour and shape in (None, s))
    if total != int(asked["count"]):
        return f"the tally has {total} {colour} {asked['shape']}s, the text counts {asked['count']}"
    return None


test_no_reference_step_is_flagged = reference_test(BENCHMARK, SYSTEMS, contradiction)
test_no_planned_replacement_is_flagged = planned_test(BENCHMARK, SYSTEMS, OPERATORS, contradiction)
test_no_operator_output_is_flagged = direct_test(BENCHMARK, SYSTEMS, OPERATORS, contradiction)


TALLY = "1 red square, 4 red triangles, 2 green squares"
CONTRADICTORY = [
    # another class's count given for the asked one, the tally unchanged
    Action(
        "assistant",
        f"The detections, by class: {TALLY}. The question asks for red "
        "triangles: 2. The answer is 2.",
        "final_answer",
        {"answer": "2"},
    ),
    # a colour question counted one too many, the tally unchanged
    Action(
        "assistant",
        f"The detections, by class: {TALLY}. The question asks for red "
        "objects: 6. The answer is 6.",
        "final_answer",
        {"answer": "6"},
    ),
    # the text answers one number, the call submits another
    Action(
        "assistant",
        f"The detections, by class: {TALLY}. The question asks for red "
        "triangles: 4. The answer is 4.",
        "final_answer",
        {"answer": "5"},
    ),
    # an answer with no tally behind it
    Action("assistant", "The answer is 4.", "final_answer", {"answer": "4"}),
    # the text announces one tool, another is called
    Action("assistant", FULL[0].format(targets="red circles"), "final_answer", {"answer": "4"}),
    # the text moves on to one region, the call scans another
    Action(
        "assistant",
        "In the top-left region: 1 red square. Next, the top-centre region.",
        "detect_objects",
        {"region": "top-right"},
    ),
    # the text announces a colour pass for one colour, the call filters another
    Action(
        "assistant",
        "Region bottom-right gives nothing. Every region is counted, 3 red circles in all; a "
        "red-only detection should confirm the total.",
        "detect_objects",
        {"colour": "blue"},
    ),
    # the text totals one colour, the call (and its announcement) checks another
    Action(
        "assistant",
        "Region bottom-right gives nothing. Every region is counted, 3 red circles in all; a "
        "blue-only detection should confirm the total.",
        "detect_objects",
        {"colour": "blue"},
    ),
    # a step that says it counts two classes
    Action(
        "assistant",
        "In the top-left region: 1 red square. An object sits on the border here, and it could "
        "be a red circle. Let me run the detection on top-left again. That makes 2 red squares "
        "so far, with 8 regions to check.",
        "detect_objects",
        {"region": "top-left"},
    ),
    # a full pass that announces nothing it counts
    Action("assistant", "Let me look at the image.", "detect_objects", {}),
]


@pytest.mark.parametrize("action", CONTRADICTORY, ids=range(len(CONTRADICTORY)))
def test_the_check_flags_a_contradictory_step(action: Action) -> None:
    assert contradiction(action)
