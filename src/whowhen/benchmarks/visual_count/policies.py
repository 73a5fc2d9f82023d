"""Scripted reference policy for visual counting (single-agent ReAct), deciding only from
the visible history: detect the objects, tally the detections by class, answer with the
tally of the class the question asks for.

The answer step writes the whole tally, so the operators can take another class's count
(a misidentified object) or be off by one (a miscount) while reading like the original.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from whowhen.agents.scripted import ScriptedReact
from whowhen.benchmarks.visual_count.env import parse_detections
from whowhen.benchmarks.visual_count.tasks import PALETTE, SHAPES, parse_question
from whowhen.runtime import Action, Step

_TALLY = re.compile(r"The detections, by class: (.+?)\. The question")
_ITEM = re.compile(r"^(\d+) (\w+) (circle|square|triangle)s?$")
_ASKED = re.compile(r"The question asks for (\w+) (circle|square|triangle|object)s: (\d+)\.")
Tally = dict[tuple[str, str], int]


def _noun(shape: str, n: int) -> str:
    return shape if n == 1 else f"{shape}s"


def format_tally(tally: Tally) -> str:
    order = {c: i for i, c in enumerate(PALETTE)} | {s: i for i, s in enumerate(SHAPES)}
    keys = sorted(tally, key=lambda k: (order.get(k[0], 99), order.get(k[1], 99)))
    return ", ".join(f"{tally[k]} {k[0]} {_noun(k[1], tally[k])}" for k in keys)


def count_of(tally: Tally, colour: str, shape: str | None) -> int:
    return sum(n for (c, s), n in tally.items() if c == colour and shape in (None, s))


def answer_action(actor: str, tally: Tally, colour: str, shape: str | None, count: int) -> Action:
    """The answer step: the tally, the class asked for, and its count."""
    return Action(
        actor,
        f"The detections, by class: {format_tally(tally) or 'none'}. The question asks for "
        f"{colour} {shape or 'object'}s: {count}. The answer is {count}.",
        "final_answer",
        {"answer": str(count)},
    )


def parse_answer(action: Action) -> tuple[Tally, str, str | None, int] | None:
    """(tally, colour, shape or None, count) of an answer step."""
    if action.tool != "final_answer":
        return None
    tally_m, asked = _TALLY.search(action.content), _ASKED.search(action.content)
    if not tally_m or not asked:
        return None
    tally: Tally = {}
    for item in tally_m.group(1).split(", "):
        m = _ITEM.match(item)
        if m:
            tally[(m.group(2), m.group(3))] = int(m.group(1))
    shape = None if asked.group(2) == "object" else asked.group(2)
    return tally, asked.group(1), shape, int(asked.group(3))


class CountReactSystem(ScriptedReact):
    """One agent: detect_objects, then answer with the tally of the asked class."""

    def act(self, history: Sequence[Step]) -> Action:
        colour, shape = parse_question(history[0].content)
        detections = [s for s in history if s.kind == "observation" and s.actor == "detect_objects"]
        if not detections or detections[-1].content.startswith("Error"):
            return Action(
                "assistant", "I will detect the objects in the image.", "detect_objects", {}
            )
        tally: Tally = dict(Counter(parse_detections(detections[-1].content)))
        return answer_action("assistant", tally, colour, shape, count_of(tally, colour, shape))


POLICIES: dict[str, type] = {"react": CountReactSystem}
"""System name -> this benchmark's scripted reference policy."""
