"""The wordings of the visual counting agent's steps, and the regexes that read them back.

Why every step names the target class: the agent decides from what it last
*said* it is counting (`stated_target`), not from the question, so a step that takes
another class for the asked one is an error that carries to the answer, whatever kind of
step it is (the opening pass, the plan, a region step, a re-check, the colour pass). Region
notes and the confirmations of a second look state the tally of a region, and the answer
adds up the latest note of each region, so a misnoted region carries too.

Each step kind has several wordings (`whowhen.agents.phrasing` draws one per step), and a
`Forms` reads any of them back with its fields as named groups.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.benchmarks.visual_count.tasks import PALETTE, SHAPES, parse_question
from whowhen.runtime import Step

Tally = dict[tuple[str, str], int]
Target = tuple[str, str | None]
"""(colour, shape or None for any shape): the class the agent counts."""
TALLY_RE = r"nothing|\d+ \w+ \w+?s?(?:, \d+ \w+ \w+?s?)*"
TARGET_RX = r"(?P<colour>[a-z]+) (?P<shape>circle|square|triangle|object)s?"
"""A target class as the steps name it ("green circles", "green object")."""
RUNNING_RX = rf"(?P<count>\d+) {TARGET_RX}"
_ITEM = re.compile(r"^(\d+) (\w+) (circle|square|triangle)s?$")


class Forms:
    """The regexes of several format-string wordings, with their fields as named groups
    (one regex per wording: Python forbids a group name twice in one pattern)."""

    def __init__(self, variants: Sequence[str], **groups: str) -> None:
        self.regexes = []
        for variant in variants:
            text = re.escape(variant)
            for name, rx in groups.items():
                text = text.replace(re.escape("{" + name + "}"), f"(?P<{name}>{rx})", 1)
                text = text.replace(re.escape("{" + name + "}"), f"(?P={name})")
            self.regexes.append(re.compile(text))

    def search(self, text: str) -> re.Match[str] | None:
        """The earliest match of any wording."""
        found = [m for rx in self.regexes if (m := rx.search(text))]
        return min(found, key=lambda m: m.start()) if found else None

    def finditer(self, text: str) -> list[re.Match[str]]:
        return sorted((m for rx in self.regexes for m in rx.finditer(text)), key=re.Match.start)


# --- the wordings -----------------------------------------------------------------------
# {targets}: the target in the plural ("green circles"); {target}: singular ("green
# circle"); {running}: a count of the target ("1 green circle", "3 green objects").

FULL = (
    "The question asks for {targets}. I'll start with one detection pass over the whole "
    "image to see what is in it.",
    "I need the number of {targets}. First a detection pass over the full image, to get an "
    "overview before counting.",
    "To count the {targets}, let me detect every object in the image once before going "
    "region by region.",
)
PLAN = (
    "The full pass lists {n} objects. To avoid missing any {targets}, I will go through the "
    "3x3 grid one region at a time, starting with {next}.",
    "That is {n} objects in all. Counting the {targets} in one go is error-prone, so I'll "
    "check the grid region by region; {next} comes first.",
    "{n} objects overall. I will count the {targets} per region and add up afterwards, "
    "beginning with the {next} region.",
)
NOTE = (
    "In the {region} region: {tally}.",
    "The {region} region holds {tally}.",
    "Region {region} gives {tally}.",
)
CONFIRM = (
    "The second look at {region} lists the same: {tally}.",
    "{region} again: still {tally}.",
    "The repeat detection of {region} agrees with the first: {tally}.",
)
"""A second look at a region restates the region's note (what it confirms)."""
NEXT = (
    "Next, the {next} region.",
    "Moving on to {next}.",
    "Now I'll look at {next}.",
)
PROGRESS = (
    "That makes {running} so far, with {left} regions to check.",
    "{done} of 9 regions done; {running} counted so far.",
    "Halfway through the grid would be five; I have done {done}, with {running} so far.",
)
RECHECK = (
    "One object crosses the edge of this region, so I will detect {region} once more to be "
    "sure no {target} is counted twice.",
    "Something reaches into {region} from a neighbouring region; no {target} may be missed, "
    "so a second look at {region} before I move on.",
    "An object sits on the border here, and it could be a {target}. Let me run the "
    "detection on {region} again.",
)
COLOUR = (
    "All nine regions are done, with {running} in my notes. To reconcile, a colour pass for "
    "{pass_colour} objects only.",
    "That was the last region, and the notes add up to {running}. Before answering I'll "
    "cross-check with a detection of the {pass_colour} objects alone.",
    "Every region is counted, {running} in all; a {pass_colour}-only detection should confirm "
    "the total.",
)
AGREE = (
    "The colour pass agrees with the region counts.",
    "The {colour} colour pass matches what the regions add up to.",
    "Good, the colour pass and my region notes agree.",
)
DISAGREE = (
    "The colour pass and my region notes disagree, so I fall back on the full pass.",
    "The {colour} colour pass does not match the regions; I will go by the full pass instead.",
    "My region notes must be off somewhere: the colour pass disagrees. I'll use the full pass.",
)
TALLY = (
    "The detections, by class: {tally}.",
    "By class, that makes {tally}.",
    "Adding up by class: {tally}.",
)
ASKED = (
    "The question asks for {colour} {shape}s: {count}.",
    "Of these, the {colour} {shape}s asked about number {count}.",
    "For {colour} {shape}s that is {count}.",
)
ANSWER = ("The answer is {count}.", "So the answer is {count}.", "I answer {count}.")

_REGION_RX = r"[a-z]+-[a-z]+"
TALLY_FORMS = Forms(TALLY, tally=TALLY_RE)
ASKED_FORMS = Forms(ASKED, colour=r"\w+", shape=r"circle|square|triangle|object", count=r"\d+")
ANSWER_FORMS = Forms(ANSWER, count=r"\d+")
NOTE_FORMS = Forms(NOTE + CONFIRM, region=_REGION_RX, tally=TALLY_RE)
"""A region's tally as a step states it: a first note, or a second look's confirmation."""
CONFIRM_FORMS = Forms(CONFIRM, region=_REGION_RX, tally=TALLY_RE)
FULL_FORMS = Forms(FULL, targets=TARGET_RX)
PLAN_FORMS = Forms(PLAN, n=r"\d+", targets=TARGET_RX, next=_REGION_RX)
PROGRESS_FORMS = Forms(PROGRESS, running=RUNNING_RX, left=r"\d+", done=r"\d+")
RECHECK_FORMS = Forms(RECHECK, region=_REGION_RX, target=TARGET_RX)
COLOUR_FORMS = Forms(COLOUR, running=RUNNING_RX, pass_colour=r"[a-z]+")
TARGET_FORMS = (FULL_FORMS, PLAN_FORMS, PROGRESS_FORMS, RECHECK_FORMS, COLOUR_FORMS, ASKED_FORMS)
"""Every wording that names the class the agent counts."""


# --- tallies and targets ----------------------------------------------------------------


def _noun(shape: str, n: int) -> str:
    return shape if n == 1 else f"{shape}s"


def format_tally(tally: Tally) -> str:
    order = {c: i for i, c in enumerate(PALETTE)} | {s: i for i, s in enumerate(SHAPES)}
    keys = sorted((k for k in tally if tally[k] > 0), key=lambda k: (order[k[0]], order[k[1]]))
    return ", ".join(f"{tally[k]} {k[0]} {_noun(k[1], tally[k])}" for k in keys) or "nothing"


def parse_tally(text: str) -> Tally:
    tally: Tally = {}
    for item in text.split(", ") if text != "nothing" else []:
        m = _ITEM.match(item)
        if m:
            tally[(m.group(2), m.group(3))] = int(m.group(1))
    return tally


def count_of(tally: Tally, colour: str, shape: str | None) -> int:
    return sum(n for (c, s), n in tally.items() if c == colour and shape in (None, s))


def target_noun(target: Target) -> str:
    """The target in the singular ("green circle", "green object")."""
    return f"{target[0]} {target[1] or 'object'}"


def target_words(target: Target, n: int | None = None) -> str:
    """The target as the steps name it: plural (`n` None), or counted ("1 green circle")."""
    noun = target_noun(target)
    if n is None:
        return f"{noun}s"
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def stated_target(history: Sequence[Step]) -> Target:
    """The class the agent last said it counts (the question's before it said any): what
    each step decides from."""
    for step in reversed(history):
        if step.actor != "assistant" or step.kind != "action":
            continue
        found = [m for forms in TARGET_FORMS if (m := forms.search(step.content))]
        if found:
            m = max(found, key=lambda m: m.start())
            colour, shape = m["colour"], m["shape"]
            if colour in PALETTE:
                return colour, None if shape == "object" else shape
    return parse_question(history[0].content)


def parse_notes(text: str) -> list[tuple[str, Tally]]:
    """(region, tally) of each region note in a step's text."""
    return [(m["region"], parse_tally(m["tally"])) for m in NOTE_FORMS.finditer(text)]
