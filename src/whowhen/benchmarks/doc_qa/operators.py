"""Error operators for the document QA steps and messages, one per taxonomy mode."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from whowhen.agents.scripted import tell
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.doc_qa.actions import (
    ANSWER,
    ANSWER_RE,
    FACT,
    FINAL,
    FINAL_RE,
    FIRST_REQUEST,
    HANDOFF,
    NEXT_REQUEST,
    REJECT,
    RELATIONS,
    REPORT,
    Fact,
    fact_text,
    handoff,
    last_index,
    next_hop,
    read_action,
    request,
)
from whowhen.benchmarks.doc_qa.tasks import CITIES, COMPANIES, FIRST, LAST
from whowhen.runtime import Action, Step

# operators ---------------------------------------------------------------------------

_COUNTRIES = tuple(sorted(set(CITIES.values())))
_PERSON = rf"(?:{'|'.join(FIRST)}) (?:{'|'.join(LAST)})"
_NAMED = (*COMPANIES, *CITIES, *_COUNTRIES)
ENTITY = re.compile(
    rf"{_PERSON}|" + "|".join(re.escape(n) for n in sorted(_NAMED, key=len, reverse=True))
)
_HOP_BEFORE = {"country": "city", "city": "person", "person": "company"}


def _kind(name: str) -> str | None:
    if name in COMPANIES:
        return "company"
    if name in CITIES:
        return "city"
    if name in _COUNTRIES:
        return "country"
    first, _, last = name.partition(" ")
    return "person" if first in FIRST and last in LAST else None


def _other_entity(value: str, rng: random.Random) -> str | None:
    """Another entity of the same kind, from the corpus name lists."""
    for pool in (tuple(CITIES), _COUNTRIES, COMPANIES):
        if value in pool:
            return rng.choice([v for v in pool if v != value])
    first, _, last = value.partition(" ")
    if first in FIRST and last in LAST:
        if rng.random() < 0.5:
            return f"{rng.choice([f for f in FIRST if f != first])} {last}"
        return f"{first} {rng.choice([n for n in LAST if n != last])}"
    return None


def _mentioned(
    value: str, history: Sequence[Step], rng: random.Random, hop_before: bool
) -> str | None:
    """Another entity that the documents read so far name: one of the same kind as
    `value` if any, else (with `hop_before`) one of the previous hop's kind (the city for a
    country, the founder for a city)."""
    kind = _kind(value)
    if kind is None:
        return None
    seen: list[str] = []
    for s in history:
        if s.kind == "observation" and s.actor == "read" and not s.content.startswith("Error:"):
            seen += [e for e in ENTITY.findall(s.content) if e != value and e not in seen]
    for want in (kind, _HOP_BEFORE.get(kind) if hop_before else None):
        pool = [e for e in seen if want and _kind(e) == want]
        if pool:
            return rng.choice(pool)
    return None


@covers("orchestrator")
def distorted_handoff(action: Action, rng: random.Random) -> Action | None:
    """A message that passes on another entity than the one found (or asked about)."""
    if action.tool is not None:
        return None
    text = action.content
    if m := REPORT.match(text):
        rel, subject, value = m.groups()
        other = _other_entity(value, rng)
        return (
            tell(action.actor, "orchestrator", f"{fact_text(rel, subject, other)}.")
            if other
            else None
        )
    if m := NEXT_REQUEST.match(text):
        rel, subject, value, rel2, _ = m.groups()
        other = _other_entity(value, rng)
        return _retell(action, request([(rel, subject, other)], rel2, other)) if other else None
    if m := FIRST_REQUEST.match(text):
        other = _other_entity(m.group(2), rng)
        return _retell(action, request([], m.group(1), other)) if other else None
    if (parsed := _handoff_facts(text)) is not None:
        rel, subject, value = parsed[-1]
        other = _other_entity(value, rng)
        return _retell(action, handoff([*parsed[:-1], (rel, subject, other)])) if other else None
    return None


def _handoff_facts(text: str) -> list[Fact] | None:
    """The facts a hand-off to the verifier lists (None for any other message)."""
    m = HANDOFF.match(text)
    facts = [FACT.match(f) for f in m.group(1).split("; ")] if m else []
    if not facts or not all(facts):
        return None
    return [f.groups() for f in facts if f]  # type: ignore[misc]


def _retell(original: Action, made: Action) -> Action:
    """`made` (built with the orchestrator's templates) as said by the original sender."""
    return Action(original.actor, made.content)


@covers("react", "orchestrator")
def wrong_subgoal(action: Action, rng: random.Random) -> Action | None:
    """A read of a document the last one did not name; or the orchestrator asking for the
    wrong hop, skipping the last hop, or adding one the question does not need."""
    if action.tool == "read":
        title = str((action.tool_args or {}).get("title", ""))
        if not title or title in CITIES:
            return None
        city = rng.choice(sorted(CITIES))
        return read_action(action.actor, city, f"I will read the document on {city}.")
    if action.tool is not None:
        return None
    if m := FIRST_REQUEST.match(action.content):
        rel, subject = m.groups()
        other = rng.choice([r for r in RELATIONS if r != rel])
        return _retell(action, request([], other, subject))
    if m := NEXT_REQUEST.match(action.content):
        rel, subject, value, _, _ = m.groups()
        return _retell(action, handoff([(rel, subject, value)]))
    if m := HANDOFF.match(action.content):
        fact = FACT.match(m.group(1).split("; ")[-1])
        if fact is None or fact.group(1) == RELATIONS[-1]:
            return None
        rel, subject, value = fact.groups()
        nxt = RELATIONS[RELATIONS.index(rel) + 1]
        return _retell(action, request([(rel, subject, value)], nxt, value))
    return None


@covers("react", "orchestrator")
def premature_finish(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """Instead of the next search or read, answer with the entity the research has reached
    so far: the founder for a city question, the birth city for a country question. The
    ReAct agent answers with what the last document read names; the researcher finishes
    with the value of the last fact it was handed."""
    if action.tool not in ("read", "search") or not history:
        return None
    if action.actor == "researcher":
        m = NEXT_REQUEST.match(history[last_index(history, "researcher")].content)
        if m is None:
            return None
        _, subject, value, _, _ = m.groups()
        text = FINAL.format(subject=subject, answer=value)
        return Action(action.actor, text, "final_answer", {"answer": value})
    if action.actor != "assistant" or action.tool != "read":  # its search comes first
        return None
    reads = [s for s in history if s.kind == "observation" and s.actor == "read"]
    hop = next_hop(reads[-1].content) if reads else None
    if hop is None:
        return None
    answer = hop[0]
    return Action(action.actor, ANSWER.format(answer=answer), "final_answer", {"answer": answer})


@covers("react", "orchestrator")
def misidentified_object(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """Another entity the documents name, taken for the one asked about: the ReAct
    answer (the city for the country, the founder for the city), the orchestrator's
    candidate (an earlier fact's value, to be confirmed against that fact's document), or
    a report or the verifier's answer naming another entity of the kind asked for."""
    if action.tool == "final_answer":
        answer = str((action.tool_args or {}).get("answer", ""))
        if ANSWER_RE.match(action.content) and action.actor == "assistant":
            other = _mentioned(answer, history, rng, hop_before=True)
            return (
                Action(action.actor, ANSWER.format(answer=other), "final_answer", {"answer": other})
                if other
                else None
            )
        m = FINAL_RE.match(action.content) if action.actor == "verifier" else None
        other = _mentioned(answer, history, rng, hop_before=False) if m else None
        if m is None or other is None:
            return None
        text = FINAL.format(subject=m.group(1), answer=other)
        return Action(action.actor, text, "final_answer", {"answer": other})
    if action.tool is not None:
        return None
    if m := REPORT.match(action.content):
        rel, subject, value = m.groups()
        other = _mentioned(value, history, rng, hop_before=False)
        return (
            tell(action.actor, "orchestrator", f"{fact_text(rel, subject, other)}.")
            if other
            else None
        )
    facts = _handoff_facts(action.content)
    if facts is None or len(facts) < 2:
        return None
    _, subject, value = facts[-2]
    return _retell(action, handoff(facts, value, subject))


def false_approval(action: Action, rng: random.Random) -> Action | None:
    """The verifier answers with the candidate it was about to send back."""
    m = REJECT.match(action.content) if action.tool is None else None
    if m is None or action.actor != "verifier":
        return None
    subject, _, answer = m.groups()
    text = FINAL.format(subject=subject, answer=answer)
    return Action(action.actor, text, "final_answer", {"answer": answer})


@covers("react")
def wrong_title(action: Action, rng: random.Random) -> Action | None:
    """action.wrong_tool_argument on `read`: a neighbouring title, mistaken for the right one
    (another company, city, or a person with another first name)."""
    if action.tool != "read":
        return None
    title = str((action.tool_args or {}).get("title", ""))
    if title in COMPANIES:
        other = rng.choice([c for c in COMPANIES if c != title])
    elif title in CITIES:
        other = rng.choice([c for c in CITIES if c != title])
    elif " " in title:
        first, last = title.split(" ", 1)
        other = f"{rng.choice([f for f in FIRST if f != first])} {last}"
    else:
        return None
    return Action(action.actor, action.content, "read", {"title": other})


OPERATORS = {
    "action.wrong_tool_argument": wrong_title,
    "coordination.distorted_handoff": distorted_handoff,
    "planning.wrong_subgoal": wrong_subgoal,
    "planning.premature_finish": premature_finish,
    "perception.misidentified_object": misidentified_object,
    "verification.false_approval": false_approval,
}
"""Taxonomy mode -> operator for this benchmark's messages, reads, searches and answers."""
