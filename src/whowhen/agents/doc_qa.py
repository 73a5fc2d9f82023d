"""Scripted reference policies for document QA, deciding only from the visible history.

ReAct: search the company, read it, then read each entity the last document names, and
answer with the final hop's entity. A wrong document read propagates.
Orchestrator: the orchestrator asks a researcher for one hop at a time (search + read +
report), then hands the candidate to a verifier who re-reads the last hop's document."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from whowhen.agents.scripted import ScriptedOrchestrator, ScriptedReact, tell
from whowhen.benchmarks.doc_qa import (
    BORN,
    CITIES,
    COMPANIES,
    FIRST,
    FOUNDED,
    LAST,
    LOCATED,
    parse_question,
)
from whowhen.runtime import Action, Step


def read_action(actor: str, title: str, why: str) -> Action:
    return Action(actor, why, "read", {"title": title})


def _next_hop(text: str) -> tuple[str, str] | None:
    """(next title, what it is) named by a document's text."""
    for pattern, what in ((FOUNDED, "the founder"), (BORN, "the birth city")):
        m = pattern.search(text)
        if m:
            return m.group(1), what
    return None


class DocReactSystem(ScriptedReact):
    def act(self, history: Sequence[Step]) -> Action:
        company, hops = parse_question(history[0].content)
        reads = [s for s in history if s.kind == "observation" and s.actor == "read"]
        if not any(s.tool == "search" for s in history):
            return Action(
                "assistant", f"I will look up {company} first.", "search", {"query": company}
            )
        if not reads:
            return read_action("assistant", company, f"I will read the document on {company}.")
        last = reads[-1].content
        if len(reads) < hops:
            hop = _next_hop(last)
            if hop is not None:
                title, what = hop
                return read_action(
                    "assistant",
                    title,
                    f"The document names {what}, {title}; I will read about them next.",
                )
        located = LOCATED.search(last)
        born = BORN.search(last)
        answer = located.group(1) if located else born.group(1) if born else last.split()[0]
        return Action(
            "assistant",
            f"The documents lead to {answer}. The answer is {answer}.",
            "final_answer",
            {"answer": answer},
        )


# orchestrator ------------------------------------------------------------------------

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
Fact = tuple[str, str, str]  # (relation, subject, value)


def _fact(rel: str, subject: str, value: str) -> str:
    return f"the {rel} of {subject} is {value}"


def _request(facts: Sequence[Fact], rel: str, subject: str) -> Action:
    if not facts:
        return tell("orchestrator", "researcher", f"find the {rel} of {subject}.")
    last = _fact(*facts[-1])
    return tell("orchestrator", "researcher", f"{last}. Find the {rel} of {subject}.")


def _handoff(facts: Sequence[Fact]) -> Action:
    _, subject, answer = facts[-1]
    return tell(
        "orchestrator",
        "verifier",
        f"{'; '.join(_fact(*f) for f in facts)}. Candidate answer: {answer}. "
        f"Please confirm it against the document on {subject}.",
    )


def _last_index(history: Sequence[Step], agent: str) -> int:
    """Index of the last message addressed to `agent` (0 if none)."""
    return max(
        (
            i
            for i, s in enumerate(history)
            if s.kind == "message" and s.content.startswith(f"To {agent}:")
        ),
        default=0,
    )


class DocOrchestratorSystem(ScriptedOrchestrator):
    """The orchestrator asks the researcher for one hop at a time and hands the last hop's
    answer to the verifier, who re-reads that hop's document: a wrong final hop is sent
    back (the research restarts), a wrong earlier hop propagates."""

    agents = ("orchestrator", "researcher", "verifier")

    def orchestrate(self, history: Sequence[Step]) -> Action:
        company, hops = parse_question(history[0].content)
        restart = max(
            (
                i
                for i, s in enumerate(history)
                if s.kind == "message"
                and (s.actor == "verifier" or NOT_FOUND.match(s.content))
                and s.content.startswith("To orchestrator:")
            ),
            default=0,
        )
        facts = [
            m.groups()
            for s in history[restart + 1 :]
            if s.actor == "researcher" and s.kind == "message" and (m := REPORT.match(s.content))
        ]
        if len(facts) < hops:
            subject = facts[-1][2] if facts else company
            return _request(facts, RELATIONS[len(facts)], subject)
        return _handoff(facts)

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        since = _last_index(history, "researcher")
        request = history[since].content
        m = FIRST_REQUEST.match(request) or NEXT_REQUEST.match(request)
        if m is None:
            return tell("researcher", "orchestrator", "I could not tell what to look for.")
        rel, subject = m.groups()[-2:]
        mine = [s for s in history[since:] if s.actor == "researcher"]
        if not any(s.tool == "search" for s in mine):
            text = f"I will search the corpus for {subject}."
            return Action("researcher", text, "search", {"query": subject})
        reads = [s for s in history[since:] if s.kind == "observation" and s.actor == "read"]
        if not reads:
            found = [s for s in history[since:] if s.kind == "observation" and s.actor == "search"]
            titles = found[-1].content.removeprefix("Results: ").split("; ") if found else []
            title = subject if subject in titles or not found else titles[0]
            return read_action("researcher", title, f"I will read the document on {title}.")
        value = PATTERNS[rel].search(reads[-1].content)
        if value is None:
            return tell("researcher", "orchestrator", f"I could not find the {rel} of {subject}.")
        return tell("researcher", "orchestrator", f"{_fact(rel, subject, value.group(1))}.")

    def verify(self, history: Sequence[Step]) -> Action:
        since = _last_index(history, "verifier")
        m = HANDOFF.match(history[since].content)
        if m is None:
            return tell("verifier", "orchestrator", "I could not tell what to check.")
        _, answer, subject = m.groups()
        reads = [s for s in history[since:] if s.kind == "observation" and s.actor == "read"]
        if not reads:
            why = f"I will re-read the document on {subject} to confirm {answer}."
            return read_action("verifier", subject, why)
        found = next(
            (p.group(1) for p in (x.search(reads[-1].content) for x in PATTERNS.values()) if p),
            "nothing",
        )
        if found == answer:
            text = FINAL.format(subject=subject, answer=answer)
            return Action("verifier", text, "final_answer", {"answer": answer})
        return tell(
            "verifier",
            "orchestrator",
            f"Check failed: the document on {subject} gives {found}, not {answer}. "
            "Please redo the research.",
        )


# operators ---------------------------------------------------------------------------


def _other_entity(value: str, rng: random.Random) -> str | None:
    """Another entity of the same kind, from the corpus name lists."""
    countries = sorted(set(CITIES.values()))
    for pool in (tuple(CITIES), countries, COMPANIES):
        if value in pool:
            return rng.choice([v for v in pool if v != value])
    first, _, last = value.partition(" ")
    if first in FIRST and last in LAST:
        if rng.random() < 0.5:
            return f"{rng.choice([f for f in FIRST if f != first])} {last}"
        return f"{first} {rng.choice([n for n in LAST if n != last])}"
    return None


def distorted_handoff(action: Action, rng: random.Random) -> Action | None:
    """A message that passes on another entity than the one found (or asked about)."""
    if action.tool is not None:
        return None
    text = action.content
    if m := REPORT.match(text):
        rel, subject, value = m.groups()
        other = _other_entity(value, rng)
        return (
            tell(action.actor, "orchestrator", f"{_fact(rel, subject, other)}.") if other else None
        )
    if m := NEXT_REQUEST.match(text):
        rel, subject, value, rel2, _ = m.groups()
        other = _other_entity(value, rng)
        return _retell(action, _request([(rel, subject, other)], rel2, other)) if other else None
    if m := FIRST_REQUEST.match(text):
        other = _other_entity(m.group(2), rng)
        return _retell(action, _request([], m.group(1), other)) if other else None
    if m := HANDOFF.match(text):
        facts = [FACT.match(f) for f in m.group(1).split("; ")]
        if not all(facts):
            return None
        parsed = [f.groups() for f in facts if f]
        rel, subject, value = parsed[-1]
        other = _other_entity(value, rng)
        return _retell(action, _handoff([*parsed[:-1], (rel, subject, other)])) if other else None
    return None


def _retell(original: Action, made: Action) -> Action:
    """`made` (built with the orchestrator's templates) as said by the original sender."""
    return Action(original.actor, made.content)


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
        return _retell(action, _request([], other, subject))
    if m := NEXT_REQUEST.match(action.content):
        rel, subject, value, _, _ = m.groups()
        return _retell(action, _handoff([(rel, subject, value)]))
    if m := HANDOFF.match(action.content):
        fact = FACT.match(m.group(1).split("; ")[-1])
        if fact is None or fact.group(1) == RELATIONS[-1]:
            return None
        rel, subject, value = fact.groups()
        nxt = RELATIONS[RELATIONS.index(rel) + 1]
        return _retell(action, _request([(rel, subject, value)], nxt, value))
    return None


def false_approval(action: Action, rng: random.Random) -> Action | None:
    """The verifier answers with the candidate it was about to send back."""
    m = REJECT.match(action.content) if action.tool is None else None
    if m is None or action.actor != "verifier":
        return None
    subject, _, answer = m.groups()
    text = FINAL.format(subject=subject, answer=answer)
    return Action(action.actor, text, "final_answer", {"answer": answer})


POLICIES: dict[str, type] = {"react": DocReactSystem, "orchestrator": DocOrchestratorSystem}
"""System name -> this benchmark's scripted reference policy."""

OPERATORS = {
    "coordination.distorted_handoff": distorted_handoff,
    "planning.wrong_subgoal": wrong_subgoal,
    "verification.false_approval": false_approval,
}
"""Taxonomy mode -> operator for this benchmark's messages and reads (the wrong-title
operator for reads is a core one, in whowhen.injection.operators)."""

PROMPTS: dict[str, dict[str, str]] = {
    "react": {
        "assistant": "You answer a multi-hop question from a document corpus: use search to "
        "find documents, read to open one by its exact title, and final_answer to answer.",
    },
    "orchestrator": {
        "orchestrator": "You plan the research: ask the researcher for one hop at a time, "
        "then hand the final candidate and the facts found to the verifier.",
        "researcher": "You answer one research request with search and read, and report the "
        "fact the document states to the orchestrator.",
        "verifier": "You re-read the last hop's document with read; if it confirms the "
        "candidate, call final_answer, otherwise send it back with what it says.",
    },
}
"""System -> agent -> the role prompt an LLM playing that agent would get."""
