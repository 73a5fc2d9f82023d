"""Error operators for the document QA steps and messages, one per taxonomy mode.

Every replacement is coherent (issue 19): it is built with the policies' own `Form`s, in
the wording the original step used (or, for a step of another kind, the wording the
policy's draw gives at that index), from a wrong belief, so the entity its text names is
the one its tool call or message carries, and the step is wrong only given the history and
the task (a misread title, another entity taken for the answer, a hop skipped or added).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.doc_qa.actions import (
    ANSWER,
    BACK,
    CHECK_SEARCH,
    FINAL,
    FIRST_REQUEST,
    HANDOFF,
    NEXT_REQUEST,
    READ,
    REJECT,
    REPORT,
    Fact,
    facts_text,
    last_index,
    parse_facts,
)
from whowhen.benchmarks.doc_qa.tasks import CITIES, COMPANIES, FIRST, LAST, RELATIONS
from whowhen.runtime import Action, Step

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


def _read_docs(history: Sequence[Step]) -> list[tuple[str, str]]:
    """(title, text) of the documents read so far."""
    out = []
    for s in history:
        if s.kind == "observation" and s.actor == "read" and s.content.startswith("Document:"):
            head, _, body = s.content.partition("\n")
            out.append((head.removeprefix("Document: "), body))
    return out


def _mentioned(
    value: str, history: Sequence[Step], rng: random.Random, hop_before: bool
) -> tuple[str, str] | None:
    """(another entity the documents read so far name, the title of a document naming it):
    one of the same kind as `value` if any, else (with `hop_before`) one of the previous
    hop's kind (the city for a country, the founder for a city)."""
    kind = _kind(value)
    if kind is None:
        return None
    seen: dict[str, str] = {}
    for title, body in _read_docs(history):
        for e in ENTITY.findall(body):
            if e != value and e != title and e not in seen:
                seen[e] = title
    for want in (kind, _HOP_BEFORE.get(kind) if hop_before else None):
        pool = [e for e in seen if want and _kind(e) == want]
        if pool:
            e = rng.choice(pool)
            return e, seen[e]
    return None


def _redo(form: Form, action: Action, **changes: str) -> Action | None:
    """`action` (a step in `form`) re-said in the same wording with `changes`."""
    found = form.read(action.content)
    if found is None:
        return None
    i, fields = found
    return Action(action.actor, form.at(i, **{**fields, **changes}))


def _say(form: Form, history: Sequence[Step], like: Action, **fields: str) -> str:
    """`form` in the wording the policy's draw gives at this step (the original's wording
    index when there is no history)."""
    if history:
        return form.say(history, **fields)
    return form.at(len(like.content) % len(form.variants), **fields)


def _handoff(history: Sequence[Step], like: Action, facts: Sequence[Fact]) -> Action:
    _, subject, value = facts[-1]
    text = _say(HANDOFF, history, like, facts=facts_text(facts), answer=value, subject=subject)
    return Action(like.actor, text)


@covers("orchestrator")
def distorted_handoff(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """A message that passes on another entity than the one found (or asked about)."""
    if action.tool is not None:
        return None
    text = action.content
    if f := REPORT.fields(text):
        other = _other_entity(f["value"], rng)
        return _redo(REPORT, action, value=other) if other else None
    if f := NEXT_REQUEST.fields(text):
        other = _other_entity(f["value"], rng)
        return _redo(NEXT_REQUEST, action, value=other, asked=other) if other else None
    if f := FIRST_REQUEST.fields(text):
        other = _other_entity(f["subject"], rng)
        return _redo(FIRST_REQUEST, action, subject=other) if other else None
    if (f := HANDOFF.fields(text)) and (facts := parse_facts(f["facts"])):
        rel, subject, value = facts[-1]
        other = _other_entity(value, rng)
        if other is None:
            return None
        changed = [*facts[:-1], (rel, subject, other)]
        return _redo(HANDOFF, action, facts=facts_text(changed), answer=other)
    return None


@covers("react", "orchestrator")
def wrong_subgoal(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """A hop's read of a city's document the last one did not name ("Opening the document
    titled Bergen to find the founder."); or the orchestrator asking for the company's
    country instead of its first link, handing off before the last hop, or asking for a hop
    the question does not need, each with the facts it has, in the orchestrator's forms."""
    if action.tool == "read":
        title = str((action.tool_args or {}).get("title", ""))
        form = next((f for f in (READ, BACK) if f.read(action.content)), None)
        if form is None or not title or title in CITIES:
            return None
        city = rng.choice(sorted(CITIES))
        made = _redo(form, action, subject=city)
        return Action(action.actor, made.content, "read", {"title": city}) if made else None
    if action.tool is not None:
        return None
    if f := FIRST_REQUEST.fields(action.content):
        if f["rel"] == RELATIONS[-1]:
            return None
        # the company's country: a plausible sub-goal (a company has no birth city)
        return _redo(FIRST_REQUEST, action, rel=RELATIONS[-1])
    if f := NEXT_REQUEST.fields(action.content):
        return _handoff(history, action, [(f["rel"], f["subject"], f["value"])])
    if (f := HANDOFF.fields(action.content)) and (facts := parse_facts(f["facts"])):
        rel, subject, value = facts[-1]
        if rel == RELATIONS[-1]:
            return None
        nxt = RELATIONS[RELATIONS.index(rel) + 1]
        text = _say(
            NEXT_REQUEST,
            history,
            action,
            rel=rel,
            subject=subject,
            value=value,
            rel2=nxt,
            asked=value,
            left="1",
        )
        return Action(action.actor, text)
    return None


@covers("react", "orchestrator")
def premature_finish(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """Instead of the next search or read, answer with the entity the research has reached
    so far (the hop's subject, named by the last document read). The ReAct agent answers
    with it; the researcher finishes with the value of the last fact it was handed."""
    if action.tool not in ("read", "search") or not history:
        return None
    if action.actor == "researcher":
        f = NEXT_REQUEST.fields(history[last_index(history, "researcher")].content)
        if f is None:
            return None
        subject, value = f["subject"], f["value"]
        text = _say(FINAL, history, action, subject=subject, answer=value)
        return Action(action.actor, text, "final_answer", {"answer": value})
    if action.actor != "assistant" or CHECK_SEARCH.read(action.content):
        return None
    docs = _read_docs(history)
    main = [
        s.tool_args["title"]
        for s in history
        if s.actor == "assistant"
        and s.tool == "read"
        and (READ.read(s.content) or BACK.read(s.content))
        and s.tool_args
    ]
    if not main:
        return None
    # the hop reached: the subject the agent now works on, named by its last main read
    last_title = main[-1]
    body = next((b for t, b in reversed(docs) if t == last_title), "")
    names = [e for e in ENTITY.findall(body) if e != last_title]
    reached = next((e for e in names if e in (action.tool_args or {}).values()), None)
    if reached is None:
        return None
    text = _say(ANSWER, history, action, subject=last_title, answer=reached)
    return Action(action.actor, text, "final_answer", {"answer": reached})


@covers("react", "orchestrator")
def misidentified_object(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """Another entity the documents name, taken for the one asked about: the ReAct
    answer (the city for the country, the founder for the city, named with the document
    that gives it), the orchestrator's candidate (the previous hop's value, handed off with
    the facts that lead to it), or a report or the verifier's answer naming another entity
    of the kind asked for; the text always names the entity passed on."""
    if action.tool == "final_answer":
        answer = str((action.tool_args or {}).get("answer", ""))
        if action.actor == "assistant" and ANSWER.read(action.content):
            found = _mentioned(answer, history, rng, hop_before=True)
            if found is None:
                return None
            other, title = found
            made = _redo(ANSWER, action, answer=other, subject=title)
            return (
                Action(action.actor, made.content, "final_answer", {"answer": other})
                if made
                else None
            )
        if action.actor != "verifier" or not FINAL.read(action.content):
            return None
        found = _mentioned(answer, history, rng, hop_before=False)
        if found is None:
            return None
        other, title = found
        made = _redo(FINAL, action, answer=other, subject=title)
        return (
            Action(action.actor, made.content, "final_answer", {"answer": other}) if made else None
        )
    if action.tool is not None:
        return None
    if f := REPORT.fields(action.content):
        found = _mentioned(f["value"], history, rng, hop_before=False)
        return _redo(REPORT, action, value=found[0]) if found else None
    f = HANDOFF.fields(action.content)
    facts = parse_facts(f["facts"]) if f else None
    if not facts or len(facts) < 2:
        return None
    # the previous hop's entity taken for the answer: the hand-off then lists the facts
    # that lead to it (listing the last fact too would contradict the candidate)
    short = facts[:-1]
    _, subject, value = short[-1]
    return _redo(HANDOFF, action, facts=facts_text(short), answer=value, subject=subject)


def false_approval(action: Action, rng: random.Random) -> Action | None:
    """The verifier answers with the candidate it was about to send back."""
    f = REJECT.fields(action.content) if action.tool is None else None
    if f is None or action.actor != "verifier":
        return None
    i = REJECT.read(action.content)[0]  # type: ignore[index]
    text = FINAL.at(i % len(FINAL.variants), subject=f["subject"], answer=f["answer"])
    return Action(action.actor, text, "final_answer", {"answer": f["answer"]})


@covers("react")
def wrong_title(action: Action, rng: random.Random) -> Action | None:
    """action.wrong_tool_argument on a hop's `read`: a neighbouring title mistaken for the
    right one (another company, city, or a person with another first name), named as such
    in the same wording ("Opening the document titled Kofi Weiss to find the birth city.")."""
    if action.tool != "read":
        return None
    form = next((f for f in (READ, BACK) if f.read(action.content)), None)
    title = str((action.tool_args or {}).get("title", ""))
    if form is None:
        return None
    if title in COMPANIES:
        other = rng.choice([c for c in COMPANIES if c != title])
    elif title in CITIES:
        other = rng.choice([c for c in CITIES if c != title])
    elif " " in title:
        first, last = title.split(" ", 1)
        other = f"{rng.choice([f for f in FIRST if f != first])} {last}"
    else:
        return None
    made = _redo(form, action, subject=other)
    return Action(action.actor, made.content, "read", {"title": other}) if made else None


OPERATORS = {
    "action.wrong_tool_argument": wrong_title,
    "coordination.distorted_handoff": distorted_handoff,
    "planning.wrong_subgoal": wrong_subgoal,
    "planning.premature_finish": premature_finish,
    "perception.misidentified_object": misidentified_object,
    "verification.false_approval": false_approval,
}
"""Taxonomy mode -> operator for this benchmark's messages, reads, searches and answers."""
