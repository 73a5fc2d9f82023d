"""Error operators for the orchestrator system's messages (requests, checks, reports,
confirmations, hand-offs, rejections), one function per taxonomy mode.

Every replacement is a message in the policy's own form that states a wrong fact or plan
as the sender's belief: the next agents take their belief from that message,
so the error decides the outcome. A change the verifier would catch for sure (a wrong
value in a check, or in the last hop's report, which it always re-reads) is not made:
that step then gets another mode's error.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.doc_qa.actions import (
    CHECK,
    CONFIRM,
    FINAL,
    FIRST_REQUEST,
    HANDOFF,
    NEXT_REQUEST,
    REJECT,
    REPORT,
    Fact,
    facts_text,
    handoff,
    parse_facts,
    request,
)
from whowhen.benchmarks.doc_qa.edits import (
    other_fact,
    other_relation,
    redo,
    say,
    swap_entity,
)
from whowhen.benchmarks.doc_qa.state import chain, hops_left, next_rel
from whowhen.benchmarks.doc_qa.tasks import chain_of
from whowhen.runtime import Action, Step

_LAST_RELS = ("birth city", "country")


def _last_hop(rel: str, history: Sequence[Step]) -> bool:
    """Whether a fact of `rel` ends the chain the question asks for (the verifier re-reads
    that document whatever the chain)."""
    if rel not in _LAST_RELS or not history:
        return False
    try:
        return chain_of(history[0].content)[1][-1] == rel
    except ValueError:
        return False


_SENDS = {
    "researcher": (REPORT,),
    "verifier": (CONFIRM, REJECT),
    "orchestrator": (FIRST_REQUEST, NEXT_REQUEST, CHECK, HANDOFF),
}
"""Which agent sends which message forms (a confirmation can read as a report)."""


def _linked(facts: Sequence[Fact]) -> bool:
    """Whether each fact's subject is the previous fact's value (a hand-off that already
    jumps, after an earlier slip, is not rewritten: its rewrite would jump too)."""
    return all(b[1] == a[2] for a, b in itertools.pairwise(facts))


def _message(action: Action) -> str | None:
    return action.content if action.tool is None else None


def _fields(action: Action, form: Form) -> dict[str, str] | None:
    """The fields of `action` as a message in `form`, if its sender sends that form."""
    if action.tool is not None or form not in _SENDS.get(action.actor, ()):
        return None
    return form.fields(action.content)


def _value_swap(
    action: Action, history: Sequence[Step], rng: random.Random, same_doc: bool
) -> Action | None:
    """A report or confirmation passing on another entity of the kind asked for than the
    document gives: one that document names (`same_doc`, a misread) or any document read."""
    text = _message(action)
    if text is None:
        return None
    for form in (REPORT, CONFIRM):
        if (f := _fields(action, form)) and not _last_hop(f["rel"], history):
            title = f["subject"] if same_doc else None
            other = swap_entity(f["value"], history, rng, title)
            return redo(form, action, value=other) if other else None
    return None


def misread_value(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """perception.misread_value: a report or confirmation carries on another entity the
    document names (its partner company for its parent, the city a founder studied in
    for the one she was born in), as the value the document gives."""
    return _value_swap(action, history, rng, same_doc=True)


def distorted_handoff(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """coordination.distorted_handoff: a report, confirmation or request passes on another
    entity of the same kind (one the documents read name) than the one found; a request
    asks about it next."""
    text = _message(action)
    if text is None:
        return None
    if f := _fields(action, NEXT_REQUEST):
        other = swap_entity(f["value"], history, rng)
        return redo(NEXT_REQUEST, action, value=other, asked=other) if other else None
    return _value_swap(action, history, rng, same_doc=False)


def misidentified_message(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """perception.misidentified_object in a message: a report or a check about another
    document read (a detour's true fact taken for the subject's), or a hand-off whose
    candidate is the previous hop's entity (with the facts that lead to it)."""
    text = _message(action)
    if text is None:
        return None
    for form in (REPORT, CHECK):
        if f := _fields(action, form):
            fact = other_fact(history, f["rel"], {f["subject"]}, rng)
            if fact is None:
                return None
            return redo(form, action, rel=fact[0], subject=fact[1], value=fact[2])
    f = _fields(action, HANDOFF)
    facts = parse_facts(f["facts"]) if f else None
    if not facts or len(facts) < 2 or not _linked(facts):
        return None
    # the previous hop's entity taken for the answer: the hand-off lists the facts that
    # lead to it (listing the last fact too would contradict the candidate)
    short = facts[:-1]
    _, subject, value = short[-1]
    return redo(HANDOFF, action, facts=facts_text(short), answer=value, subject=subject)


def _handoff_like(history: Sequence[Step], like: Action, facts: Sequence[Fact]) -> Action:
    _, subject, value = facts[-1]
    text = say(HANDOFF, history, like, facts=facts_text(facts), answer=value, subject=subject)
    return Action(like.actor, text)


def subgoal_message(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """planning.wrong_subgoal in a message: the first request asks for the company's
    founder (the parent companies skipped); a request becomes a hand-off of the fact it
    had (the rest of the chain skipped); a hand-off becomes a request for one more hop;
    a check or a report is about the company's other relation (its founder for its parent
    company), as its document states it."""
    text = _message(action)
    if text is None:
        return None
    if f := _fields(action, FIRST_REQUEST):
        if f["rel"] != "parent company":
            return None
        return redo(FIRST_REQUEST, action, rel="founder")
    if f := _fields(action, NEXT_REQUEST):
        return _handoff_like(history, action, [(f["rel"], f["subject"], f["value"])])
    for form in (CHECK, REPORT):
        if f := _fields(action, form):
            fact = other_relation(history, f["rel"], f["subject"])
            return redo(form, action, rel=fact[0], value=fact[2]) if fact else None
    f = _fields(action, HANDOFF)
    if f and (facts := parse_facts(f["facts"])) and _linked(facts):
        rel, subject, value = facts[-1]
        nxt = {"parent company": "founder", "founder": "birth city", "birth city": "country"}
        if rel not in nxt:
            return None
        fields = {"rel": rel, "subject": subject, "value": value, "rel2": nxt[rel]}
        text = say(NEXT_REQUEST, history, action, asked=value, left="1", **fields)
        return Action(action.actor, text)
    return None


def false_approval(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """verification.false_approval: the verifier passes what it was about to send back:
    an intermediate fact, confirmed (the research goes on from it), or the candidate,
    answered."""
    f = REJECT.fields(action.content) if action.tool is None else None
    if f is None or action.actor != "verifier":
        return None
    asked = [s for s in history if s.content.startswith("To verifier:")]
    if asked and (c := CHECK.fields(asked[-1].content)):
        fields = {"rel": c["rel"], "subject": c["subject"], "value": c["value"]}
        return Action(action.actor, say(CONFIRM, history, action, **fields))
    i = REJECT.read(action.content)[0]  # type: ignore[index]
    text = FINAL.at(i % len(FINAL.variants), subject=f["subject"], answer=f["answer"])
    return Action(action.actor, text, "final_answer", {"answer": f["answer"]})


def _rejected_check(history: Sequence[Step]) -> tuple[int, Fact] | None:
    """(index of the rejection, the fact the check asked about) when the last agent step is
    the verifier sending an intermediate check back."""
    steps = [s for s in history if s.is_agent_step]
    if not steps or steps[-1].actor != "verifier" or not REJECT.read(steps[-1].content):
        return None
    asked = [s for s in steps[:-1] if s.content.startswith("To verifier:")]
    if not asked or not (f := CHECK.fields(asked[-1].content)):
        return None
    return steps[-1].step, (f["rel"], f["subject"], f["value"])


def ignored_message(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """coordination.ignored_message: the orchestrator goes on as if the verifier had not
    sent its check back: it asks for the next hop from the fact it had asked about (or
    hands the chain off, if that fact ends it)."""
    if _message(action) is None or action.actor != "orchestrator" or not history:
        return None
    found = _rejected_check(history)
    if found is None:
        return None
    at, fact = found
    rejects = [
        i
        for i, s in enumerate(history[:at])
        if s.actor == "verifier" and s.kind == "message" and REJECT.read(s.content)
    ]
    facts = chain(history[:at], max(rejects, default=0))
    if not facts:
        return None
    facts[-1] = fact
    rels = chain_of(history[0].content)[1]
    nxt = next_rel(rels, facts)
    if nxt is None:
        return handoff(history, facts)
    return request(history, facts, nxt, fact[2], hops_left(rels, facts))
