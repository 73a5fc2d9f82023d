"""What the document QA operators build their wrong beliefs from: entities the documents
read so far name, true facts about other subjects, the other relation of a company, and
re-saying a step in its own wording with other fields.

Why from the history: a coherent error is one the agent could have made from
what it saw (a partner company taken for the parent, the city a founder studied in taken
for the one she was born in, a detour document taken for the subject's own), and an
entity that exists in the corpus keeps the run going on the wrong belief instead of
stopping at a missing document, so the error decides the outcome.
"""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Sequence

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.doc_qa.actions import (
    NEXT_REQUEST,
    REPORT,
    Fact,
    read_value,
)
from whowhen.benchmarks.doc_qa.state import docs_read, is_main_read, stated_target
from whowhen.benchmarks.doc_qa.tasks import CITIES, COMPANIES, FIRST, LAST, chain_of
from whowhen.runtime import Action, Step

COUNTRIES = tuple(sorted(set(CITIES.values())))
_PERSON = rf"(?:{'|'.join(FIRST)}) (?:{'|'.join(LAST)})"
_NAMED = (*COMPANIES, *CITIES, *COUNTRIES)
ENTITY = re.compile(
    rf"{_PERSON}|" + "|".join(re.escape(n) for n in sorted(_NAMED, key=len, reverse=True))
)
KIND_OF_REL = {
    "parent company": "company",
    "founder": "person",
    "birth city": "city",
    "country": "country",
}
COMPANY_RELS = ("parent company", "founder")


def entity_kind(name: str) -> str | None:
    """company, person, city or country (None for anything else)."""
    if name in COMPANIES:
        return "company"
    if name in CITIES:
        return "city"
    if name in COUNTRIES:
        return "country"
    first, _, last = name.partition(" ")
    return "person" if first in FIRST and last in LAST else None


def known_chain(history: Sequence[Step]) -> set[str]:
    """Every entity the run has already placed on its chain (the question's company, each
    hop's subject and every fact a message stated): a swap never lands on one of them, or
    the wrong belief could lead back onto the right chain."""
    known: set[str] = set()
    if history:
        with contextlib.suppress(ValueError):
            known.add(chain_of(history[0].content)[0])
    for s in history:
        if is_main_read(s) and (t := stated_target(s.content)):
            known.add(t[1])
        if s.kind == "message":
            for form in (REPORT, NEXT_REQUEST):
                if f := form.fields(s.content):
                    known.update((f["subject"], f["value"]))
    return known


def named_in(
    history: Sequence[Step], kind: str, exclude: set[str], title: str | None = None
) -> list[str]:
    """Entities of `kind` that the documents read name (only the document `title` if
    given), most recent document first, without `exclude` or a document's own title."""
    out: list[str] = []
    for t, text in reversed(docs_read(history)):
        if title is not None and t != title:
            continue
        for e in ENTITY.findall(text):
            if e != t and e not in exclude and e not in out and entity_kind(e) == kind:
                out.append(e)
    return out


def swap_entity(
    value: str,
    history: Sequence[Step],
    rng: random.Random,
    title: str | None = None,
) -> str | None:
    """Another entity of `value`'s kind that the documents read name (only `title`'s if
    given), not on the chain: what a misread or a mixed-up hand-off passes on."""
    kind = entity_kind(value)
    if kind is None:
        return None
    pool = named_in(history, kind, known_chain(history) | {value}, title)
    return rng.choice(pool[:3]) if pool else None


def other_fact(
    history: Sequence[Step], rel: str, exclude: set[str], rng: random.Random
) -> Fact | None:
    """A true fact of relation `rel` about another document read (a detour's), not one
    about a subject in `exclude` or on the chain: what is taken for the subject's fact."""
    skip = exclude | known_chain(history)
    pool = {
        title: value
        for title, text in docs_read(history)
        if title not in skip and (value := read_value(text, rel))
    }
    if not pool:
        return None
    title = rng.choice(sorted(pool))
    return rel, title, pool[title]


def other_relation(history: Sequence[Step], rel: str, subject: str) -> Fact | None:
    """The company's other relation (its founder for its parent, or back) as its document,
    read earlier, states it: the fact a wrong sub-goal pursues."""
    if rel not in COMPANY_RELS or entity_kind(subject) != "company":
        return None
    other = COMPANY_RELS[1 - COMPANY_RELS.index(rel)]
    for title, text in reversed(docs_read(history)):
        if title == subject and (value := read_value(text, other)):
            return other, subject, value
    return None


def redo(form: Form, action: Action, **changes: str) -> Action | None:
    """`action` (a step in `form`) re-said in the same wording with `changes`, as a
    message (the caller adds the tool call)."""
    found = form.read(action.content)
    if found is None:
        return None
    i, fields = found
    return Action(action.actor, form.at(i, **{**fields, **changes}))


def say(form: Form, history: Sequence[Step], like: Action, **fields: str) -> str:
    """`form` in the wording the policy's draw gives at this step (the original's wording
    index when there is no history)."""
    if history:
        return form.say(history, **fields)
    return form.at(len(like.content) % len(form.variants), **fields)
