"""Role prompts for an LLM playing the document QA systems' agents."""

from __future__ import annotations

PROMPTS: dict[str, dict[str, str]] = {
    "react": {
        "assistant": "You answer a multi-hop question from a document corpus: use search to "
        "find documents, read to open one by its exact title, and final_answer to answer.",
    },
    "orchestrator": {
        "orchestrator": "You plan the research: ask the researcher for one hop at a time, "
        "optionally ask the verifier to confirm an intermediate fact, then hand the final "
        "candidate and the facts found to the verifier.",
        "researcher": "You answer one research request with search and read, and report the "
        "fact the document states to the orchestrator.",
        "verifier": "You re-read the document a fact comes from with read: confirm an "
        "intermediate fact or send it back; for the final candidate, call final_answer if "
        "the document confirms it, otherwise send it back with what it says.",
    },
    "ledger": {
        "Orchestrator": "You lead a team (WebSurfer, FileSurfer, Assistant, ComputerTerminal) to "
        "answer the question from the document corpus. Write an initial plan; before every "
        "turn, write an updated ledger as JSON (is_request_satisfied, is_in_loop, "
        "is_progress_being_made, next_speaker, instruction_or_question, each with a reason "
        "and an answer), then give the next speaker its instruction as 'To <agent>: ...'; "
        "once the chain is done, give 'FINAL ANSWER: ...' with final_answer.",
        "FileSurfer": "You search the corpus and open its documents: carry out the "
        "Orchestrator's instruction with one search or read, saying which relation of which "
        "subject you are after.",
    },
}
"""System -> agent -> the role prompt an LLM playing that agent would get."""
