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
}
"""System -> agent -> the role prompt an LLM playing that agent would get."""
