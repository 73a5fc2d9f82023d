"""The document QA policies' messages and actions: templates, builders and the parsers that
read them back."""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents.scripted import tell
from whowhen.benchmarks.doc_qa.tasks import BORN, FOUNDED, LOCATED
from whowhen.runtime import Action, Step

ANSWER = "The documents lead to {answer}. The answer is {answer}."
ANSWER_RE = re.compile(r"^The documents lead to (.+)\. The answer is \1\.$")
RELATIONS = ("founder", "birth city", "country")
PATTERNS = {"founder": FOUNDED, "birth city": BORN, "country": LOCATED}
_REL = r"(founder|birth city|country)"
FIRST_REQUEST = re.compile(rf"^To researcher: find the {_REL} of (.+)\.$")
NEXT_REQUEST = re.compile(
    rf"^To researcher: the {_REL} of (.+) is (.+)\. Find the {_REL} of (.+)\.$"
)
REPORT = re.compile(rf"^To orchestrator: the {_REL} of (.+) is (.+)\.$")
NOT_FOUND = re.compile(rf"^To orchestrator: I could not find the {_REL} of (.+)\.$")
HANDOFF = re.compile(
    r"^To verifier: (.+)\. Candidate answer: (.+)\. Please confirm it against the document "
    r"on (.+)\.$"
)
FACT = re.compile(rf"^the {_REL} of (.+) is (.+)$")
REJECT = re.compile(
    r"^To orchestrator: Check failed: the document on (.+) gives (.+), not (.+)\. "
    r"Please redo the research\.$"
)
FINAL = "The document on {subject} confirms {answer}. Final answer: {answer}."
FINAL_RE = re.compile(r"^The document on (.+) confirms (.+)\. Final answer: \2\.$")
Fact = tuple[str, str, str]  # (relation, subject, value)


def read_action(actor: str, title: str, why: str) -> Action:
    return Action(actor, why, "read", {"title": title})


def next_hop(text: str) -> tuple[str, str] | None:
    """(next title, what it is) named by a document's text."""
    for pattern, what in ((FOUNDED, "the founder"), (BORN, "the birth city")):
        m = pattern.search(text)
        if m:
            return m.group(1), what
    return None


def fact_text(rel: str, subject: str, value: str) -> str:
    return f"the {rel} of {subject} is {value}"


def request(facts: Sequence[Fact], rel: str, subject: str) -> Action:
    """The orchestrator's request for the next hop, with the last fact found."""
    if not facts:
        return tell("orchestrator", "researcher", f"find the {rel} of {subject}.")
    last = fact_text(*facts[-1])
    return tell("orchestrator", "researcher", f"{last}. Find the {rel} of {subject}.")


def handoff(facts: Sequence[Fact], answer: str | None = None, subject: str | None = None) -> Action:
    """The orchestrator's hand-off of the facts and the candidate (by default the last
    fact's value, to be confirmed against its subject's document) to the verifier."""
    _, last_subject, last_value = facts[-1]
    answer, subject = answer or last_value, subject or last_subject
    return tell(
        "orchestrator",
        "verifier",
        f"{'; '.join(fact_text(*f) for f in facts)}. Candidate answer: {answer}. "
        f"Please confirm it against the document on {subject}.",
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
