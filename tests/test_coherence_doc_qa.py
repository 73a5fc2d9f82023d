"""Coherent errors for doc_qa: an injected step must not contradict itself.

`contradiction` reads ONE step (its text, tool and arguments) and says why it contradicts
itself, or None: the entity the text names differs from the tool argument, the text
announces another tool than the one called, a fact's value is not of the kind its relation
gives, or a message's request or candidate does not follow from the facts it lists. It
must flag no step of the slip-free reference rollouts and no replacement made by the
package's operators (else an attributor could find the error without reading the run), and
it must flag the contradictions the audit found (so it is a real check)."""

from __future__ import annotations

import re
from itertools import pairwise

from whowhen.benchmarks.doc_qa import actions as A
from whowhen.benchmarks.doc_qa.actions import parse_facts
from whowhen.benchmarks.doc_qa.edits import entity_kind
from whowhen.benchmarks.doc_qa.operators import OPERATORS
from whowhen.runtime import Action

from .coherence_checks import all_modes_test, reference_test

BENCHMARK = "doc_qa"
SYSTEMS = ("react", "orchestrator")
_VALUE_KIND = {
    "parent company": "company",
    "founder": "person",
    "birth city": "city",
    "country": "country",
}
# the forms that name what is searched, read or answered: (form, tool, argument, field)
_TOOL_FORMS = (
    *((f, "search", "query", "subject") for f in (A.SEARCH, A.SEARCH_NEXT, A.REFINE, A.RETRY)),
    (A.BROAD_SEARCH, "search", "query", "query"),
    (A.PHRASE, "search", "query", "query"),
    (A.CHECK_SEARCH, "search", "query", "answer"),
    (A.DETOUR, "read", "title", "title"),
    *((f, "read", "title", "subject") for f in (A.READ, A.BACK, A.VERIFY_READ)),
    *((f, "final_answer", "answer", "answer") for f in (A.ANSWER, A.GIVE_UP, A.FINAL)),
)
_ANNOUNCES = (  # words that announce a tool, for texts no form above matches
    (re.compile(r"\b(?:answer is|final answer)\b", re.I), "final_answer"),
    (re.compile(r"\b(?:I will (?:re-)?read|[Rr]eading|Opening)\b"), "read"),
    (re.compile(r"\b(?:I will (?:look up|search)|[Ss]earching)\b"), "search"),
)


def _fact_problem(rel: str, subject: str, value: str) -> str | None:
    kind = entity_kind(value)
    if kind is not None and kind != _VALUE_KIND[rel]:
        return f"the {rel} of {subject} is a {kind} ({value})"
    return None


def _message_problem(text: str) -> str | None:
    """A message whose facts, request or candidate contradict each other."""
    for form in (A.REPORT, A.CHECK, A.CONFIRM):
        if f := form.fields(text):
            return _fact_problem(f["rel"], f["subject"], f["value"])
    if f := A.NEXT_REQUEST.fields(text):
        if f["asked"] != f["value"]:
            return f"found {f['value']} but asks about {f['asked']}"
        return _fact_problem(f["rel"], f["subject"], f["value"])
    if f := A.HANDOFF.fields(text):
        chain = parse_facts(f["facts"])
        if not chain:
            return "a hand-off fact out of form"
        for (_, _, value), (_, subject, _) in pairwise(chain):
            if subject != value:
                return f"the facts jump from {value} to {subject}"
        for fact in chain:
            if problem := _fact_problem(*fact):
                return problem
        _, subject, value = chain[-1]
        if f["answer"] != value:
            return f"the facts lead to {value} but the candidate is {f['answer']}"
        if f["subject"] != subject:
            return f"{value} comes from the document on {subject}, not on {f['subject']}"
        return None
    if f := A.REJECT.fields(text):
        return (
            f"rejects {f['answer']} while the document gives it"
            if f["found"] == f["answer"]
            else None
        )
    if A.FIRST_REQUEST.read(text) or A.NOT_FOUND.read(text):
        return None
    for pattern, tool in _ANNOUNCES:
        if pattern.search(text):
            return f"a message announcing {tool}"
    return None


def contradiction(action: Action) -> str | None:
    """Why this one step contradicts itself (None if it does not), from its text, tool and
    arguments alone."""
    text, args = action.content, action.tool_args or {}
    if action.tool is None:
        return _message_problem(text)
    for form, tool, arg, field in _TOOL_FORMS:
        f = form.fields(text)
        if f is None:
            continue
        if tool != action.tool:
            return f"the text announces {tool} but calls {action.tool}"
        if str(args.get(arg, "")) != f[field]:
            return f"the text names {f[field]} but {arg} is {args.get(arg)!r}"
        if form is A.SEARCH_NEXT:
            return _fact_problem(f["prev"], f["prev_subject"], f["subject"])
        return None
    for pattern, tool in _ANNOUNCES:
        if pattern.search(text) and tool != action.tool:
            return f"the text announces {tool} but calls {action.tool}"
    return None


test_no_reference_step_is_flagged = reference_test(BENCHMARK, SYSTEMS, contradiction, 101)
test_no_replacement_is_flagged = all_modes_test(BENCHMARK, SYSTEMS, OPERATORS, contradiction)


def test_the_check_flags_the_contradictions_the_audit_found() -> None:
    bad = [
        Action(
            "assistant",
            "I will read the document on Juniper Grid for the founder.",
            "read",
            {"title": "Ironleaf"},
        ),
        Action(
            "assistant",
            "Opening the document titled Lena Weiss to find the birth city.",
            "read",
            {"title": "Lena Novak"},
        ),
        Action(
            "assistant",
            "So the chain ends at Porto, from the document on Lena Weiss. The answer is Porto.",
            "final_answer",
            {"answer": "Lyon"},
        ),
        Action(
            "assistant",
            "The document on Lena Weiss gives Porto, the last link of the chain. "
            "The answer is Porto.",
            "read",
            {"title": "Porto"},
        ),
        Action(
            "assistant",
            "I need the founder of Emberly; I will search the corpus for Emberly.",
            "search",
            {"query": "Ironleaf"},
        ),
        Action(
            "assistant",
            "The founder of Emberly is Porto. Next I search for Porto to find the birth city.",
            "search",
            {"query": "Porto"},
        ),
        Action(
            "verifier",
            "The document on Lena Weiss confirms Porto. Final answer: Porto.",
            "final_answer",
            {"answer": "Graz"},
        ),
        Action("researcher", "To orchestrator: the birth city of Lena Weiss is Lena Novak."),
        Action(
            "orchestrator",
            "To researcher: the founder of Emberly is Lena Weiss. "
            "Find the birth city of Lena Novak.",
        ),
        Action(
            "orchestrator",
            "To verifier: the founder of Emberly is Lena Weiss; the birth city of Lena Weiss is "
            "Porto. Candidate answer: Lena Weiss. "
            "Please confirm it against the document on Emberly.",
        ),
        Action(
            "verifier",
            "To orchestrator: confirmed, the document on Emberly gives Porto as the founder.",
        ),
        Action("assistant", "To be sure I will read it again.", "search", {"query": "Porto"}),
    ]
    for action in bad:
        assert contradiction(action), action
    good = Action(
        "assistant",
        "I will read the document on Ironleaf for the founder.",
        "read",
        {"title": "Ironleaf"},
    )
    assert contradiction(good) is None
