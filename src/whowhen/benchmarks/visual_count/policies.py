"""Scripted reference policy for visual counting (single-agent ReAct), deciding only from
the visible history: a detection pass over the whole image, then the 3x3 grid region by
region (noting each region's objects by class in the next step's text, and looking at a
region again when an object crosses its edge), then a colour pass for the target's colour
to reconcile; the answer adds up the region notes (or falls back on the full pass when the
colour pass disagrees with them).

Why the agent decides from its own words: every step names the class it counts
and the next step takes it from there (`stated_target`), a second look restates the
region's note rather than re-reading it, and the answer adds up the latest note of each
region. So a wrong belief stated at any step (another class taken for the asked one, a
shape misnoted in a region) carries to the answer; only a wrong colour total is caught,
by the colour pass.

`decide` is the whole policy as a function of the history and the agent's belief (the
target, and what it reads off the latest region listing), so an operator re-decides a
step with a wrong belief and gets the step the policy would have written holding it.
Every step's wording is drawn from several phrasings (`whowhen.agents.phrasing`), a pure
function of the task text and the step index, so that re-decided step is worded as the
original was.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedReact
from whowhen.benchmarks.visual_count.env import REGIONS, parse_detections
from whowhen.benchmarks.visual_count.phrases import (
    AGREE,
    ANSWER,
    ANSWER_FORMS,
    ASKED,
    ASKED_FORMS,
    COLOUR,
    CONFIRM,
    DISAGREE,
    FULL,
    NEXT,
    NOTE,
    NOTE_FORMS,
    PLAN,
    PROGRESS,
    RECHECK,
    TALLY,
    TALLY_FORMS,
    Tally,
    Target,
    count_of,
    format_tally,
    parse_notes,
    parse_tally,
    stated_target,
    target_noun,
    target_words,
)
from whowhen.runtime import Action, Step

__all__ = [
    "ANSWER_FORMS",
    "ASKED_FORMS",
    "FULL",
    "NOTE_FORMS",
    "TALLY_FORMS",
    "CountReactSystem",
    "Tally",
    "answer_action",
    "count_of",
    "decide",
    "format_tally",
    "parse_answer",
    "parse_notes",
    "parse_tally",
]

_CROSSING = re.compile(r"^(\d+) objects centred in neighbouring regions", re.M)
_COLOUR_HEAD = re.compile(r"^Colour pass for (\w+): (\d+) objects")


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


def detect(text: str, **args: str) -> Action:
    return Action("assistant", text, "detect_objects", dict(args))


def region_notes(history: Sequence[Step]) -> dict[str, Tally]:
    """The agent's own notes, region -> tally (a later note on a region wins)."""
    notes: dict[str, Tally] = {}
    for step in history:
        if step.actor == "assistant" and step.kind == "action":
            notes.update(parse_notes(step.content))
    return notes


def last_call(history: Sequence[Step]) -> tuple[Step, Step] | None:
    """(the agent's last detect call, its observation)."""
    for i in range(len(history) - 1, 0, -1):
        step = history[i]
        if step.kind == "observation" and step.actor == "detect_objects":
            return history[i - 1], step
    return None


def full_pass(history: Sequence[Step]) -> Tally | None:
    """The class counts of the full detection pass, once it is in the history."""
    for i, step in enumerate(history):
        if (
            step.kind == "observation"
            and step.actor == "detect_objects"
            and not (history[i - 1].tool_args or {})
            and not step.content.startswith("Error")
        ):
            return dict(Counter(parse_detections(step.content)))
    return None


def _sum(tallies) -> Tally:
    total: Counter[tuple[str, str]] = Counter()
    for tally in tallies:
        total.update(tally)
    return dict(total)


def _move_on(
    history: Sequence[Step], head: str, region: str, notes: dict[str, Tally], target: Target
) -> Action:
    """After a region's note (or its confirmation): the count so far and the next region,
    or after the last region, the colour pass for the target's colour."""
    running = target_words(target, count_of(_sum(notes.values()), *target))
    i = REGIONS.index(region)
    if i + 1 < len(REGIONS):
        nxt = REGIONS[i + 1]
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
    colour = target[0]
    text = phrasing.phrase(history, "vc.colour", COLOUR, running=running, pass_colour=colour)
    return detect(f"{head} {text}", colour=colour)


def _region_step(
    history: Sequence[Step], call: Step, seen: Step, target: Target, read: Tally | None
) -> Action:
    """After a region listing: note it (or confirm the note after a second look), then
    look again, move on, or start the colour pass."""
    region = str((call.tool_args or {})["region"])
    notes = region_notes(history)
    listed: Tally = dict(Counter(parse_detections(seen.content)))
    crossing = _CROSSING.search(seen.content)
    again = [s for s in history if s.tool == "detect_objects" and s.tool_args == call.tool_args]
    if (
        len(again) == 1
        and crossing
        and int(crossing.group(1)) > 0
        and phrasing.chance(history, "vc.recheck", 0.3)
    ):
        tally = listed if read is None else read
        note = phrasing.phrase(history, "vc.note", NOTE, region=region, tally=format_tally(tally))
        why = phrasing.phrase(
            history, "vc.recheck.why", RECHECK, region=region, target=target_noun(target)
        )
        return detect(f"{note} {why}", region=region)
    if len(again) > 1:  # the second look confirms the note it was taken for
        tally = notes.get(region, listed) if read is None else read
        head = phrasing.phrase(
            history, "vc.confirm", CONFIRM, region=region, tally=format_tally(tally)
        )
    else:
        tally = listed if read is None else read
        head = phrasing.phrase(history, "vc.note", NOTE, region=region, tally=format_tally(tally))
    notes[region] = tally  # the note this step writes
    return _move_on(history, head, region, notes, target)


def _answer(history: Sequence[Step], seen: Step, target: Target) -> Action:
    """After the colour pass: the region notes' tally if the pass agrees with them, else
    the full pass's; the target's count in it is the answer."""
    colour, shape = target
    head = _COLOUR_HEAD.match(seen.content)
    found = int(head.group(2)) if head else -1
    tally = _sum(region_notes(history).values())
    if found == count_of(tally, colour, None):
        lead = phrasing.phrase(history, "vc.agree", AGREE, colour=colour)
    else:
        tally = full_pass(history) or {}
        lead = phrasing.phrase(history, "vc.disagree", DISAGREE, colour=colour)
    count = count_of(tally, colour, shape)
    return answer_action("assistant", tally, colour, shape, count, history, lead)


def decide(history: Sequence[Step], target: Target, read: Tally | None = None) -> Action:
    """The agent's next step, holding `target` as the class it counts and, where the step
    notes a region, `read` as what it reads off the listing (None: what it lists)."""
    last = last_call(history)
    if last is None or last[1].content.startswith("Error"):
        text = phrasing.phrase(history, "vc.full", FULL, targets=target_words(target))
        return detect(text)
    call, seen = last
    args = call.tool_args or {}
    if not args:  # the full pass: plan the region scan
        n = len(parse_detections(seen.content))
        text = phrasing.phrase(
            history, "vc.plan", PLAN, n=n, next=REGIONS[0], targets=target_words(target)
        )
        return detect(text, region=REGIONS[0])
    if "region" in args and args["region"] in REGIONS:
        return _region_step(history, call, seen, target, read)
    return _answer(history, seen, target)


class CountReactSystem(ScriptedReact):
    """One agent: full pass, nine regions (with re-checks), colour pass, answer."""

    def act(self, history: Sequence[Step]) -> Action:
        return decide(history, stated_target(history))


POLICIES: dict[str, type] = {"react": CountReactSystem}
"""System name -> this benchmark's scripted reference policy."""
