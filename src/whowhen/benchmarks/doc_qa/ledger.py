"""The ledger orchestrator on document QA: Magentic-One's Orchestrator directing its
FileSurfer through a corpus of documents, hop by hop along the question's chain.

The Orchestrator's ledger names the FileSurfer's next move, worked out as a lone reader
would (`DocReactSystem` with the FileSurfer as its actor: a search for the hop's subject,
sometimes a broad or exact-phrase search first or a look at another hit, then the
subject's own document); the instruction passes it on (`Please search the files for
'...'`, `Please open the file '...'`); the FileSurfer carries it out, saying which relation
of which subject it is after, as the reader says it, so what it says is what the following
moves build on (`doc_qa.state`). When the chain is done the ledger says the request is
satisfied and the Orchestrator gives the `FINAL ANSWER`. A FileSurfer told to open or
search something else than the reader would says so in the reader's words, with the
subject it was given: a wrong instruction is carried on.
"""

from __future__ import annotations

from collections.abc import Sequence

from whowhen.agents.ledger import (
    FINAL_ANSWER,
    ORCHESTRATOR,
    Instructions,
    ScriptedLedger,
    initial_plan,
    instruction_to,
    last_ledger,
    ledger_step,
)
from whowhen.benchmarks.doc_qa.actions import READ, SEARCH
from whowhen.benchmarks.doc_qa.policies import DocReactSystem
from whowhen.benchmarks.doc_qa.state import stated_target
from whowhen.benchmarks.doc_qa.tasks import chain_of
from whowhen.runtime import Action, Step

FILES = "FileSurfer"
INSTRUCTIONS = {
    "search": "Please search the files for '{query}'.",
    "read": "Please open the file '{title}' and read it.",
}
"""Tool -> the Orchestrator's instruction that asks the FileSurfer for that move."""
_ASKED = Instructions(INSTRUCTIONS)


class _Reader(DocReactSystem):
    """The moves a lone reader would make, as the FileSurfer."""

    actor = FILES


def next_move(history: Sequence[Step]) -> Action:
    """The FileSurfer's next search or read, or the final answer, from the run so far."""
    return _Reader().act(history)


def instruction(move: Action) -> str:
    """The ledger's instruction for `move`: a search or read, or the final answer."""
    args = move.tool_args or {}
    if move.tool == "final_answer":
        return f"{FINAL_ANSWER}{args.get('answer', '')}"
    return INSTRUCTIONS[str(move.tool)].format(**args)


def read_instruction(text: str) -> tuple[str, dict[str, str]] | None:
    """(tool, arguments) an instruction asks for, or None."""
    return _ASKED.read(text)


class DocLedgerSystem(ScriptedLedger):
    agents = (ORCHESTRATOR, FILES)

    def plan(self, history: Sequence[Step]) -> Action:
        company, rels = chain_of(history[0].content)
        question = history[0].content.split("Question: ", 1)[-1].strip()
        steps = (
            f"FileSurfer searches the files for {company} and reads its document for the "
            f"{rels[0]}.",
            "FileSurfer follows the chain one link at a time: "
            + ", then ".join(rels)
            + ", each from its subject's own document.",
            "We give the last link as the final answer.",
        )
        return Action(ORCHESTRATOR, initial_plan(question, steps))

    def ledger(self, history: Sequence[Step]) -> Action:
        move = next_move(history)
        return ledger_step(history, move.tool == "final_answer", FILES, instruction(move))

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        found = read_instruction(instruction_to(history, worker))
        ledger = last_ledger(history)
        if found is None or ledger is None:  # an instruction it cannot carry out
            return Action(FILES, f"To {ORCHESTRATOR}: I cannot do that with the files.")
        tool, args = found
        move = next_move(history[: ledger[0]])  # what the ledger worked out
        if move.tool == tool and move.tool_args == args:
            return Action(FILES, move.content, tool, args)
        rel, _ = stated_target(move.content) or (chain_of(history[0].content)[1][0], "")
        subject = args.get("title") or args.get("query", "")
        form = READ if tool == "read" else SEARCH
        return Action(FILES, form.say(history, rel=rel, subject=subject), tool, args)
