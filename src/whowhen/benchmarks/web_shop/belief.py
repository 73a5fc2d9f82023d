"""The agents' working belief about what to buy, read from what they said.

Why from the steps and not from the instruction: an agent (or a team) acts on what it
last said it is after. Each field of the target (colour, product word, size, budget)
comes from the most recent agent step that stated it, and from the instruction only
until one did. So a step that states a wrong target, in any kind of step, is carried on
to the purchase, as it would be by an agent that trusts its own notes and its team's
hand-offs, and a run goes wrong exactly where that step is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from whowhen.benchmarks.web_shop.actions import (
    DESC_RE,
    LINE_OPTION_RE,
    OPTION_RE,
    SELECT,
    TOOL_FORMS,
    Want,
    article,
    describe,
    options_text,
    want_of,
)
from whowhen.benchmarks.web_shop.messages import ADDED, OPTION_FORMS, TARGET_FORMS
from whowhen.benchmarks.web_shop.tasks import parse_instruction
from whowhen.runtime import Step

DESC_FORMS = (*TOOL_FORMS, *TARGET_FORMS)
FIELDS = ("colour", "noun", "size", "cap")


@dataclass(frozen=True)
class Spec:
    """What to buy: colour, product word, size (None for unsized goods), budget."""

    colour: str
    noun: str
    size: str | None
    cap: int

    @property
    def want(self) -> Want:
        return want_of(self.colour, self.size)

    @property
    def desc(self) -> str:
        return describe(self.colour, self.noun, self.size)

    @property
    def article(self) -> str:
        return article(self.colour)

    @property
    def options(self) -> str:
        return options_text(self.want)

    def target(self) -> dict[str, object]:
        """The fields a target-stating form takes."""
        return {"article": self.article, "desc": self.desc, "cap": self.cap, "noun": self.noun}


def stated(text: str) -> dict[str, object]:
    """The target fields one agent step states (empty if none)."""
    return dict(_stated(text))


@lru_cache(maxsize=1 << 15)
def _stated(text: str) -> tuple[tuple[str, object], ...]:
    """`stated`, remembered by text: every step re-reads the whole history for the target
    (`spec_of`), so without it a run costs the square of its length in pattern matches
    (a ledger run of 75 steps, 40 forms per step)."""
    return tuple(_read_target(text).items())


def _read_target(text: str) -> dict[str, object]:
    for form in DESC_FORMS:
        f = form.fields(text)
        if f is None:
            continue
        out: dict[str, object] = {}
        m = DESC_RE.match(f.get("desc") or "")
        if m:
            out.update(colour=m.group(1), noun=m.group(2), size=m.group(3))
        if f.get("cap"):
            out["cap"] = int(f["cap"])
        return out
    for form in OPTION_FORMS:
        f = form.fields(text)
        if f is not None:
            return _sized(dict(OPTION_RE.findall(f["options"])), f.get("cap"))
    if (f := SELECT.fields(text)) is not None:
        return {f["name"]: f["value"]}
    if (f := ADDED.fields(text)) is not None:
        return _sized(dict(LINE_OPTION_RE.findall(f["line"])), None)
    return {}


def _sized(options: dict[str, str], cap: str | None) -> dict[str, object]:
    """Options as target fields: a colour-only statement says there is no size."""
    out: dict[str, object] = {"colour": options["colour"]} if "colour" in options else {}
    if out:
        out["size"] = options.get("size")
    if cap:
        out["cap"] = int(cap)
    return out


def spec_of(history: Sequence[Step]) -> Spec:
    """The target as the agents last stated it, field by field (the instruction's where no
    agent step has stated a field yet)."""
    colour, noun, size, cap = parse_instruction(history[0].content)
    known: dict[str, object] = {}
    for step in reversed(history):
        if not step.is_agent_step:
            continue
        for key, value in stated(step.content).items():
            known.setdefault(key, value)
        if all(k in known for k in FIELDS):
            break
    return Spec(
        str(known.get("colour", colour)),
        str(known.get("noun", noun)),
        known.get("size", size),  # type: ignore[arg-type]
        int(known.get("cap", cap)),  # type: ignore[call-overload]
    )
