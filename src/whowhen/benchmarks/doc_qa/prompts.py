"""Role prompts for an LLM playing the document QA systems' agents."""

from __future__ import annotations

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
