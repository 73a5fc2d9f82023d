"""Scripted reference policy for visual counting (single-agent ReAct), deciding only from
the visible history: a detection pass over the whole image, then the 3x3 grid region by
region (noting each region's objects by class in the next step's text, and looking at a
region again when an object crosses its edge), then a colour pass for the asked colour to
reconcile; the answer adds up the region notes (or falls back on the full pass when the
colour pass disagrees with them).

The agent trusts its own region notes, so a class misnoted in one region (a shape taken
for another of the same colour) propagates, while a miscount of the asked colour is caught
by the colour pass. The answer step writes the whole tally, so the operators can take
another class's count or be off by one while reading like the original.

Every step's wording is drawn from several phrasings (`whowhen.agents.phrasing`), a pure
function of the task text and the step index, so operators rebuild a step in the wording
the policy would have used at that index.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedReact
from whowhen.benchmarks.visual_count.env import REGIONS, parse_detections
from whowhen.benchmarks.visual_count.tasks import PALETTE, SHAPES, parse_question
from whowhen.runtime import Action, Step

Tally = dict[tuple[str, str], int]
_ITEM = re.compile(r"^(\d+) (\w+) (circle|square|triangle)s?$")
_REGION_HEAD = re.compile(r"^Region ([a-z]+-[a-z]+) ")
_CROSSING = re.compile(r"^(\d+) objects centred in neighbouring regions", re.M)
_COLOUR_HEAD = re.compile(r"^Colour pass for (\w+): (\d+) objects")
TALLY_RE = r"nothing|\d+ \w+ \w+?s?(?:, \d+ \w+ \w+?s?)*"


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

FULL = (
    "I'll start with one detection pass over the whole image to see what is in it.",
    "First a detection pass over the full image, to get an overview before counting.",
    "Let me detect every object in the image once before going region by region.",
)
PLAN = (
    "The full pass lists {n} objects. To avoid missing any, I will go through the 3x3 grid "
    "one region at a time, starting with {next}.",
    "That is {n} objects in all. Counting them in one go is error-prone, so I'll check the "
    "grid region by region; {next} comes first.",
    "{n} objects overall. I will count per region and add up afterwards, beginning with "
    "the {next} region.",
)
NOTE = (
    "In the {region} region: {tally}.",
    "The {region} region holds {tally}.",
    "Region {region} gives {tally}.",
)
NEXT = (
    "Next, the {next} region.",
    "Moving on to {next}.",
    "Now I'll look at {next}.",
)
PROGRESS = (
    "That leaves {left} regions to check.",
    "{done} of 9 regions done.",
    "Halfway through the grid would be five; I have done {done}.",
)
RECHECK = (
    "One object crosses the edge of this region, so I will detect {region} once more to be "
    "sure nothing is counted twice.",
    "Something reaches into {region} from a neighbouring region; a second look at {region} "
    "before I move on.",
    "An object sits on the border here. Let me run the detection on {region} again.",
)
CONFIRM = (
    "The second look at {region} lists the same objects.",
    "{region} again: nothing changes.",
    "The repeat detection of {region} agrees with the first.",
)
COLOUR = (
    "All nine regions are done. To reconcile, a colour pass for {colour} objects only.",
    "That was the last region. Before answering I'll cross-check with a detection of the "
    "{colour} objects alone.",
    "Every region is counted; a {colour}-only detection should confirm the total.",
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
TALLY_FORMS = Forms(TALLY, tally=TALLY_RE)
ASKED_FORMS = Forms(ASKED, colour=r"\w+", shape=r"circle|square|triangle|object", count=r"\d+")
ANSWER_FORMS = Forms(ANSWER, count=r"\d+")
NOTE_FORMS = Forms(NOTE, region=r"[a-z]+-[a-z]+", tally=TALLY_RE)


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


def answer_action(
    actor: str,
    tally: Tally,
    colour: str,
    shape: str | None,
    count: int,
    history: Sequence[Step] = (),
    lead: str = "",
) -> Action:
    """The answer step: an optional lead (the reconciliation), the tally, the class asked
    for and its count, in the wording drawn for this step."""
    fields = {"colour": colour, "shape": shape or "object", "count": count}
    text = " ".join(
        (
            *([lead] if lead else []),
            phrasing.phrase(history, "vc.tally", TALLY, tally=format_tally(tally)),
            phrasing.phrase(history, "vc.asked", ASKED, **fields),
            phrasing.phrase(history, "vc.answer", ANSWER, count=count),
        )
    )
    return Action(actor, text, "final_answer", {"answer": str(count)})


def parse_answer(action: Action) -> tuple[Tally, str, str | None, int] | None:
    """(tally, colour, shape or None, count) of an answer step."""
    if action.tool != "final_answer":
        return None
    text = action.content
    tally, asked = TALLY_FORMS.search(text), ASKED_FORMS.search(text)
    answer = ANSWER_FORMS.search(text)
    if not tally or not asked or not answer or not tally.end() < asked.start() < answer.start():
        return None
    shape = None if asked["shape"] == "object" else asked["shape"]
    return parse_tally(tally["tally"]), asked["colour"], shape, int(asked["count"])


def answer_lead(action: Action) -> str:
    """The text before an answer step's tally (the reconciliation sentence)."""
    m = TALLY_FORMS.search(action.content)
    return action.content[: m.start()].strip() if m else ""


def note_text(history: Sequence[Step], region: str, tally: Tally) -> str:
    return phrasing.phrase(history, "vc.note", NOTE, region=region, tally=format_tally(tally))


def parse_notes(text: str) -> list[tuple[str, Tally]]:
    """(region, tally) of each region note in a step's text."""
    return [(m["region"], parse_tally(m["tally"])) for m in NOTE_FORMS.finditer(text)]


def detect(text: str, **args: str) -> Action:
    return Action("assistant", text, "detect_objects", dict(args))


def _region_notes(history: Sequence[Step]) -> dict[str, Tally]:
    """The agent's own notes, region -> tally (a later note on a region wins)."""
    notes: dict[str, Tally] = {}
    for step in history:
        if step.actor == "assistant" and step.kind == "action":
            notes.update(parse_notes(step.content))
    return notes


def _last_call(history: Sequence[Step]) -> tuple[Step, Step] | None:
    """(the agent's last detect call, its observation)."""
    for i in range(len(history) - 1, 0, -1):
        step = history[i]
        if step.kind == "observation" and step.actor == "detect_objects":
            return history[i - 1], step
    return None


class CountReactSystem(ScriptedReact):
    """One agent: full pass, nine regions (with re-checks), colour pass, answer."""

    def act(self, history: Sequence[Step]) -> Action:
        colour, shape = parse_question(history[0].content)
        last = _last_call(history)
        if last is None or last[1].content.startswith("Error"):
            return detect(phrasing.phrase(history, "vc.full", FULL))
        call, seen = last
        args = call.tool_args or {}
        notes = _region_notes(history)
        if not args:  # the full pass: plan the region scan
            n = len(parse_detections(seen.content))
            text = phrasing.phrase(history, "vc.plan", PLAN, n=n, next=REGIONS[0])
            return detect(text, region=REGIONS[0])
        if "region" in args:
            region = str(args["region"])
            tally: Tally = dict(Counter(parse_detections(seen.content)))
            crossing = _CROSSING.search(seen.content)
            again = [
                s for s in history if s.tool == "detect_objects" and s.tool_args == call.tool_args
            ]
            if (
                len(again) == 1
                and crossing
                and int(crossing.group(1)) > 0
                and phrasing.chance(history, "vc.recheck", 0.3)
            ):
                text = " ".join(
                    (
                        note_text(history, region, tally),
                        phrasing.phrase(history, "vc.recheck.why", RECHECK, region=region),
                    )
                )
                return detect(text, region=region)
            if len(again) > 1:
                head = phrasing.phrase(history, "vc.confirm", CONFIRM, region=region)
            else:
                head = note_text(history, region, tally)
            notes.setdefault(region, tally)  # the note this step writes
            i = REGIONS.index(region)
            if i + 1 < len(REGIONS):
                nxt = REGIONS[i + 1]
                running = count_of(_sum(notes.values()), colour, shape)
                progress = phrasing.phrase(
                    history,
                    "vc.progress",
                    PROGRESS,
                    left=len(REGIONS) - i - 1,
                    done=i + 1,
                    running=running,
                )
                step_text = phrasing.phrase(history, "vc.next", NEXT, next=nxt)
                return detect(f"{head} {progress} {step_text}", region=nxt)
            text = f"{head} {phrasing.phrase(history, 'vc.colour', COLOUR, colour=colour)}"
            return detect(text, colour=colour)
        # the colour pass: reconcile and answer
        head = _COLOUR_HEAD.match(seen.content)
        found = int(head.group(2)) if head else -1
        tally = _sum(notes.values())
        if found == count_of(tally, colour, None):
            lead = phrasing.phrase(history, "vc.agree", AGREE, colour=colour)
        else:
            full = next(
                s
                for i, s in enumerate(history)
                if s.kind == "observation"
                and s.actor == "detect_objects"
                and not (history[i - 1].tool_args or {})
                and not s.content.startswith("Error")
            )
            tally = dict(Counter(parse_detections(full.content)))
            lead = phrasing.phrase(history, "vc.disagree", DISAGREE, colour=colour)
        count = count_of(tally, colour, shape)
        return answer_action("assistant", tally, colour, shape, count, history, lead)


def _sum(tallies) -> Tally:
    total: Counter[tuple[str, str]] = Counter()
    for tally in tallies:
        total.update(tally)
    return dict(total)


POLICIES: dict[str, type] = {"react": CountReactSystem}
"""System name -> this benchmark's scripted reference policy."""
