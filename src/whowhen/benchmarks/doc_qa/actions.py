"""The document QA policies' messages and actions: their wordings (`Form`s, three or more
each), builders and the parsers that read them back, shared with the operators."""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.doc_qa.tasks import BORN, FOUNDED, LOCATED, OWNED, RELATIONS
from whowhen.runtime import Action, Step

PATTERNS = {"parent company": OWNED, "founder": FOUNDED, "birth city": BORN, "country": LOCATED}
BROAD = {"parent company": "subsidiary", "founder": "founded"}
Fact = tuple[str, str, str]  # (relation, subject, value)
_REL = "|".join(RELATIONS)
P = {"rel": _REL, "rel2": _REL, "prev": _REL, "n": r"\d+", "left": r"\d+"}

# ReAct agent and researcher: searches and reads ---------------------------------------
SEARCH = Form(
    "doc.search",
    (
        "I need the {rel} of {subject}; I will search the corpus for {subject}.",
        "First step: find the {rel} of {subject}. Searching for {subject}.",
        "The chain starts at {subject}, so I will look up {subject} and find its {rel}.",
    ),
    **P,
)
SEARCH_NEXT = Form(
    "doc.search_next",
    (
        "The {prev} of {prev_subject} is {subject}. Next I search for {subject} to find the {rel}.",
        "So the {prev} of {prev_subject} is {subject}; that leaves {left} more to follow. "
        "Searching for {subject} now, for its {rel}.",
        "Following the chain, {prev_subject} leads to {subject} (its {prev}). Now I look up "
        "{subject} for the {rel}.",
    ),
    **P,
)
BROAD_SEARCH = Form(
    "doc.broad",
    (
        "Before narrowing down to {subject}, a broad search for '{query}' shows how the corpus "
        "words the {rel}.",
        "I will start broad with '{query}' and narrow the search to the {rel} of {subject} "
        "afterwards.",
        "A quick broad search for '{query}' first, to see which documents give a {rel}; "
        "{subject} comes next.",
    ),
    **P,
)
REFINE = Form(
    "doc.refine",
    (
        "The broad search gives {n} documents, too many to read; I will narrow it to {subject} "
        "and its {rel}.",
        "{n} hits is too broad. Searching for {subject} instead, for the {rel}.",
        "That returned {n} documents. Narrowing the search to {subject} to find the {rel}.",
    ),
    **P,
)
PHRASE = Form(
    "doc.phrase",
    (
        "I will try the phrase '{query}' in case a document states it directly.",
        "Searching the exact phrase '{query}' first.",
        "Maybe a document says '{query}' word for word; I will search for that phrase.",
    ),
    **P,
)
RETRY = Form(
    "doc.retry",
    (
        "No document uses that phrase. I will search for {subject} alone to find the {rel}.",
        "The phrase search found nothing, so the wording differs; searching for {subject} and "
        "its {rel}.",
        "Nothing matched the phrase. A plain search for {subject} should give the {rel}.",
    ),
    **P,
)
DETOUR = Form(
    "doc.detour",
    (
        "The hits include {title}, which mentions {subject}; I will read it first in case it "
        "gives the {rel}.",
        "Among the hits, {title} comes up for {subject}. Reading it to see whether it states the "
        "{rel}.",
        "Let me check {title} first: its snippet mentions {subject}, maybe with the {rel}.",
    ),
    **P,
)
READ = Form(
    "doc.read",
    (
        "I will read the document on {subject} for the {rel}.",
        "There is a document on {subject} itself; reading it for the {rel}.",
        "Opening the document titled {subject} to find the {rel}.",
    ),
    **P,
)
BACK = Form(
    "doc.back",
    (
        "The document on {other} only mentions {subject} in passing and does not give the "
        "{rel}; I will read the document on {subject} itself.",
        "Not the right document: {other} does not state the {rel} of {subject}. "
        "Reading {subject} instead.",
        "That was a detour, {other} says nothing about the {rel} of {subject}. Now the document "
        "on {subject}.",
    ),
    **P,
)
CHECK_SEARCH = Form(
    "doc.check_search",
    (
        "Before answering, I will search for {answer} to make sure the corpus agrees.",
        "A last check: searching for {answer} to see it in context.",
        "To double-check {answer}, I will look it up once more.",
    ),
)
ANSWER = Form(
    "doc.answer",
    (
        "The document on {subject} gives {answer}, the last link of the chain. "
        "The answer is {answer}.",
        "So the chain ends at {answer}, from the document on {subject}. The answer is {answer}.",
        "What the document on {subject} states, {answer}, answers the question. "
        "The answer is {answer}.",
    ),
)

# orchestrator, researcher and verifier messages -----------------------------------------
FIRST_REQUEST = Form(
    "doc.first",
    (
        "To researcher: find the {rel} of {subject}.",
        "To researcher: please look up the {rel} of {subject}; that is the first link.",
        "To researcher: we start at {subject}. What is the {rel} of {subject}?",
    ),
    **P,
)
NEXT_REQUEST = Form(
    "doc.next",
    (
        "To researcher: the {rel} of {subject} is {value}. Find the {rel2} of {asked}.",
        "To researcher: noted, {value} is the {rel} of {subject}. Next, find the {rel2} of "
        "{asked}.",
        "To researcher: good, the {rel} of {subject} is {value}; {left} more to go. Now look up "
        "the {rel2} of {asked}.",
    ),
    **P,
)
REPORT = Form(
    "doc.report",
    (
        "To orchestrator: the {rel} of {subject} is {value}.",
        "To orchestrator: the document on {subject} names {value} as the {rel}.",
        "To orchestrator: found it, {value} is the {rel} of {subject}.",
    ),
    **P,
)
NOT_FOUND = Form(
    "doc.not_found",
    (
        "To orchestrator: I could not find the {rel} of {subject}.",
        "To orchestrator: the document on {subject} does not give the {rel}.",
        "To orchestrator: no luck, nothing I read states the {rel} of {subject}.",
    ),
    **P,
)
HANDOFF = Form(
    "doc.handoff",
    (
        "To verifier: {facts}. Candidate answer: {answer}. Please confirm it against the "
        "document on {subject}.",
        "To verifier: the chain is {facts}. That makes {answer} the candidate; please check it "
        "in the document on {subject}.",
        "To verifier: please confirm {answer} against the document on {subject}. "
        "The facts: {facts}.",
    ),
)
CHECK = Form(
    "doc.check",
    (
        "To verifier: before I go on, please confirm that the {rel} of {subject} is {value}.",
        "To verifier: a quick check on an intermediate link: is the {rel} of {subject} really "
        "{value}?",
        "To verifier: please re-read the document on {subject} and confirm {value} as the {rel}.",
    ),
    **P,
)
CONFIRM = Form(
    "doc.confirm",
    (
        "To orchestrator: confirmed, the document on {subject} gives {value} as the {rel}.",
        "To orchestrator: the {rel} of {subject} is indeed {value}; go on.",
        "To orchestrator: checked. The document on {subject} states {value} as the {rel}.",
    ),
    **P,
)
REJECT = Form(
    "doc.reject",
    (
        "To orchestrator: Check failed: the document on {subject} gives {found}, not {answer}. "
        "Please redo the research.",
        "To orchestrator: {answer} does not hold up: the document on {subject} gives {found}. "
        "Please redo the research.",
        "To orchestrator: I cannot confirm {answer}; the document on {subject} says {found}. "
        "Please redo the research.",
    ),
)
VERIFY_READ = Form(
    "doc.verify_read",
    (
        "I will re-read the document on {subject} to confirm {answer}.",
        "A check of {answer} against the document on {subject}.",
        "Opening the document on {subject} to see whether it gives {answer}.",
    ),
)
FINAL = Form(
    "doc.final",
    (
        "The document on {subject} confirms {answer}. Final answer: {answer}.",
        "Checked: {answer} holds against the document on {subject}. Final answer: {answer}.",
        "Confirmed in the document on {subject}: {answer}. Final answer: {answer}.",
    ),
)
FACT = re.compile(rf"^the ({_REL}) of (.+) is (.+)$")
MAIN_READS = (READ, BACK)
"""The reads that take a hop's document (the others are detours or checks)."""
SEARCHES = (SEARCH, SEARCH_NEXT, REFINE, RETRY)
"""The searches for a hop's subject (the others are broad or phrase searches)."""


def fact_text(rel: str, subject: str, value: str) -> str:
    return f"the {rel} of {subject} is {value}"


def facts_text(facts: Sequence[Fact]) -> str:
    return "; ".join(fact_text(*f) for f in facts)


def parse_facts(text: str) -> list[Fact] | None:
    """The facts a `facts_text` lists (None if any is out of form)."""
    found = [FACT.match(f) for f in text.split("; ")]
    if not found or not all(found):
        return None
    return [f.groups() for f in found if f]  # type: ignore[misc]


def tell(history: Sequence[Step], sender: str, form: Form, **fields: str) -> Action:
    """A message in `form`, worded by the draw for the step being decided."""
    return Action(sender, form.say(history, **fields))


def read_value(text: str, rel: str) -> str | None:
    """The value of `rel` that a read document states (None if it states none)."""
    m = PATTERNS[rel].search(text)
    return m.group(1) if m else None


def doc_title(text: str) -> str | None:
    """The title of a read observation (None for an error)."""
    return (
        text.split("\n", 1)[0].removeprefix("Document: ") if text.startswith("Document:") else None
    )


HIT = re.compile(r"^\d+\. (.+?): ", re.M)


def hits(text: str) -> list[str]:
    """The titles a search observation lists."""
    return HIT.findall(text)


def answer_action(history: Sequence[Step], actor: str, subject: str, answer: str) -> Action:
    """The ReAct agent's answer, naming the document it comes from."""
    return Action(
        actor,
        ANSWER.say(history, subject=subject, answer=answer),
        "final_answer",
        {"answer": answer},
    )


def request(
    history: Sequence[Step], facts: Sequence[Fact], rel: str, subject: str, left: int
) -> Action:
    """The orchestrator's request for the next hop, with the last fact found."""
    if not facts:
        return tell(history, "orchestrator", FIRST_REQUEST, rel=rel, subject=subject)
    r, s, v = facts[-1]
    return tell(
        history,
        "orchestrator",
        NEXT_REQUEST,
        rel=r,
        subject=s,
        value=v,
        rel2=rel,
        asked=subject,
        left=str(left),
    )


def handoff(history: Sequence[Step], facts: Sequence[Fact]) -> Action:
    """The orchestrator's hand-off of the facts and the candidate (the last fact's value,
    to be confirmed against its subject's document) to the verifier."""
    _, subject, value = facts[-1]
    return tell(
        history, "orchestrator", HANDOFF, facts=facts_text(facts), answer=value, subject=subject
    )


def last_index(history: Sequence[Step], agent: str) -> int:
    """Index of the last message addressed to `agent` (0 if none)."""
    return max(
        (
            i
            for i, s in enumerate(history)
            if s.kind == "message" and s.content.startswith(f"To {agent}:")
        ),
        default=0,
    )


GIVE_UP = Form(
    "doc.give_up",
    (
        "The document on {subject} does not state the {rel}; the best I have is {answer}. "
        "The answer is {answer}.",
        "No {rel} for {subject} in its document, so I stop at {answer}. The answer is {answer}.",
        "I cannot follow the chain past {subject} (no {rel} given); {answer} is as far as it "
        "goes. The answer is {answer}.",
    ),
    **P,
)
