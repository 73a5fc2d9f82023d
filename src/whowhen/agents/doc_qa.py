"""Scripted reference policy for document QA (single-agent ReAct), deciding only from the
visible history: search the company, read it, then read each entity the last document
names, and answer with the final hop's entity. A wrong document read propagates."""

from __future__ import annotations

from collections.abc import Sequence

from whowhen.agents.scripted import ScriptedReact
from whowhen.benchmarks.doc_qa import BORN, FOUNDED, LOCATED, parse_question
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


POLICIES: dict[str, type] = {"react": DocReactSystem}
"""System name -> this benchmark's scripted reference policy."""
