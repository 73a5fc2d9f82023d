"""Scripted reference policies for document QA, deciding only from the visible history.

ReAct: search the company, read it, then read each entity the last document names, and
answer with the final hop's entity. A wrong document read propagates.
Orchestrator: the orchestrator asks a researcher for one hop at a time (search + read +
report), then hands the candidate to a verifier who re-reads the last hop's document.
"""

from __future__ import annotations

from collections.abc import Sequence

from whowhen.agents.scripted import ScriptedOrchestrator, ScriptedReact, tell
from whowhen.benchmarks.doc_qa.actions import (
    ANSWER,
    FINAL,
    FIRST_REQUEST,
    HANDOFF,
    NEXT_REQUEST,
    NOT_FOUND,
    PATTERNS,
    RELATIONS,
    REPORT,
    fact_text,
    handoff,
    last_index,
    next_hop,
    read_action,
    request,
)
from whowhen.benchmarks.doc_qa.tasks import BORN, LOCATED, parse_question
from whowhen.runtime import Action, Step


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
            hop = next_hop(last)
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
        return Action("assistant", ANSWER.format(answer=answer), "final_answer", {"answer": answer})


# orchestrator ------------------------------------------------------------------------


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
            return request(facts, RELATIONS[len(facts)], subject)
        return handoff(facts)

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        since = last_index(history, "researcher")
        asked = history[since].content
        m = FIRST_REQUEST.match(asked) or NEXT_REQUEST.match(asked)
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
        return tell("researcher", "orchestrator", f"{fact_text(rel, subject, value.group(1))}.")

    def verify(self, history: Sequence[Step]) -> Action:
        since = last_index(history, "verifier")
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


POLICIES: dict[str, type] = {"react": DocReactSystem, "orchestrator": DocOrchestratorSystem}
"""System name -> this benchmark's scripted reference policy."""
