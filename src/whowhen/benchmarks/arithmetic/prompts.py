"""Role prompts for an LLM playing the arithmetic systems' agents."""

from __future__ import annotations

PROMPTS: dict[str, dict[str, str]] = {
    "react": {
        "assistant": "You solve a multi-step word problem: apply one operation at a time with "
        "calculator, carrying the running total, then give it with final_answer.",
    },
    "code_act": {
        "assistant": "You solve a multi-step word problem by writing short Python programs "
        "with run_python (one operation each, printing the running total), then final_answer.",
    },
    "solver_verifier": {
        "solver": "You compute the answer with calculator, one operation at a time, report "
        "partial results to the verifier now and then, and propose the answer in a message "
        "('Proposed answer: N.').",
        "verifier": "You check every calculation's operation against the problem; if all are "
        "right call final_answer with the proposed answer, else send the solver back.",
    },
}
"""System -> agent -> the role prompt an LLM playing that agent gets."""
