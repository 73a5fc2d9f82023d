"""What the document QA agents believe, read back from what their own steps said.

Why: an error can only become the decisive step of a failure if later steps
build on it. So every search and read says which relation of which subject it is after,
every message restates the fact it passes on, and the policies take their working belief
(the hop's target, the chain of facts, the candidate) from the most recent agent step
that stated it, not from the task or a hidden variable. A document read is the only place
where an observation enters a belief: the value it states for the relation the read step
named. So a wrong subject in a search is read next, a wrong fact in a confirmation is the
one the next request builds on, and a wrong candidate in a check is the one answered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.benchmarks.doc_qa.actions import (
    BACK,
    BROAD_SEARCH,
    CHECK,
    CONFIRM,
    DETOUR,
    MAIN_READS,
    NEXT_REQUEST,
    PHRASE,
    READ,
    REFINE,
    REPORT,
    RETRY,
    SEARCH,
    SEARCH_NEXT,
    Fact,
    doc_title,
    read_value,
)
from whowhen.benchmarks.doc_qa.tasks import RELATIONS
from whowhen.runtime import Step

Target = tuple[str, str]  # (relation, subject): what a hop is after
HOP_FORMS = (SEARCH, SEARCH_NEXT, BROAD_SEARCH, REFINE, PHRASE, RETRY, DETOUR, READ, BACK)
"""The search and read steps of a hop: each names the relation and subject it is after."""
_QUERY = re.compile(rf"^({'|'.join(RELATIONS)}) of (.+)$")


def phrase_query(rel: str, subject: str) -> str:
    """The exact-phrase query for a hop (`PHRASE`), which `stated_target` reads back."""
    return f"{rel} of {subject}"


def stated_target(text: str) -> Target | None:
    """(relation, subject) a search or read step says it is after (None for other steps)."""
    for form in HOP_FORMS:
        f = form.fields(text)
        if f is None:
            continue
        if form is PHRASE:
            m = _QUERY.match(f["query"])
            return (m.group(1), m.group(2)) if m else None
        return f["rel"], f["subject"]
    return None


def own_steps(history: Sequence[Step], actor: str, since: int) -> list[tuple[Step, str]]:
    """The actor's tool calls after `since`, each with the observation it got."""
    out = []
    for i in range(since + 1, len(history)):
        s = history[i]
        if s.actor == actor and s.kind == "action":
            nxt = history[i + 1] if i + 1 < len(history) else None
            out.append((s, nxt.content if nxt is not None and nxt.kind == "observation" else ""))
    return out


def is_main_read(step: Step) -> bool:
    """A read of the hop's own document (not a detour or a verifier's re-read)."""
    return step.tool == "read" and any(f.read(step.content) for f in MAIN_READS)


def next_rel(rels: Sequence[str], facts: Sequence[Fact]) -> str | None:
    """The relation to follow after `facts` (None when the chain is complete), from the
    relations the facts state: after a parent company another one until the question's
    count of them is reached, then the founder, the birth city and (if asked) the country.
    A fact stated with another relation moves the plan with it."""
    if not facts:
        return rels[0] if rels else None
    last = facts[-1][0]
    if last == "parent company":
        done = sum(r == "parent company" for r, _, _ in facts)
        return "parent company" if done < rels.count("parent company") else "founder"
    order = ("founder", "birth city", "country")
    i = order.index(last)
    nxt = order[i + 1] if i + 1 < len(order) else None
    return nxt if nxt in rels else None


def hops_left(rels: Sequence[str], facts: Sequence[Fact]) -> int:
    """How many links are left to follow, the next one included (at least one)."""
    return max(1, len(rels) - len(facts))


def hop_target(history: Sequence[Step], actor: str, since: int, start: Target) -> Target:
    """The hop's target: `start`, as restated (or changed) by the actor's latest search or
    read after `since`."""
    target = start
    for step, _ in own_steps(history, actor, since):
        target = stated_target(step.content) or target
    return target


def hop_result(
    history: Sequence[Step], actor: str, since: int, start: Target
) -> tuple[Target, str | None, int] | None:
    """(target, value, index of the observation) once the actor's hop begun after `since`
    has read its document: the value that document states for the relation the read named
    (None if it states none); None while the hop is still searching."""
    target = start
    for step, obs in own_steps(history, actor, since):
        target = stated_target(step.content) or target
        if is_main_read(step):
            return target, read_value(obs, target[0]), step.step + 1
    return None


def restate(facts: list[Fact], fact: Fact, new_link: bool = False) -> None:
    """Apply a statement of `fact` to the chain: it supersedes the fact about the same
    subject (and the facts derived from it); otherwise a report (`new_link`) adds a link
    and a restatement (a request, a check, a confirmation) replaces the last one."""
    at = next((i for i, (_, s, _) in enumerate(facts) if s == fact[1]), None)
    if at is not None:
        del facts[at:]
        facts.append(fact)
    elif new_link or not facts:
        facts.append(fact)
    else:
        facts[-1] = fact


_RESTATED = {
    "researcher": (REPORT,),
    "orchestrator": (NEXT_REQUEST, CHECK),
    "verifier": (CONFIRM,),
}
"""Who states a fact of the chain in which messages (a report adds a link)."""


def chain(history: Sequence[Step], since: int) -> list[Fact]:
    """The orchestrator's chain of facts after `since`, as the messages stated them: the
    researcher's reports, and the facts the orchestrator's requests and checks and the
    verifier's confirmations restate."""
    facts: list[Fact] = []
    for s in history[since + 1 :]:
        if s.kind != "message":
            continue
        forms = _RESTATED.get(s.actor, ())
        f = next((g for form in forms if (g := form.fields(s.content))), None)
        if f is not None:
            fact = (f["rel"], f["subject"], f["value"])
            restate(facts, fact, new_link=s.actor == "researcher")
    return facts


def docs_read(history: Sequence[Step]) -> list[tuple[str, str]]:
    """(title, text) of the documents read so far, in order."""
    out = []
    for s in history:
        if s.kind == "observation" and s.actor == "read" and (title := doc_title(s.content)):
            out.append((title, s.content.partition("\n")[2]))
    return out


def source_of(history: Sequence[Step], facts: Sequence[Fact], answer: str) -> str:
    """The document an answer comes from: the subject of the fact that states it, else
    the latest document read that names it, else the last fact's subject."""
    for _, subject, value in reversed(facts):
        if value == answer:
            return subject
    for title, text in reversed(docs_read(history)):
        if answer in text and title != answer:
            return title
    return facts[-1][1] if facts else answer
