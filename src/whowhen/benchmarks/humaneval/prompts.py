"""Role prompts for an LLM playing the HumanEval systems' agents."""

from __future__ import annotations

PROMPTS: dict[str, dict[str, str]] = {
    "code_act": {
        "assistant": "You solve a Python coding task by writing programs: run your solution on "
        "the docstring examples with run_python, then submit the full program with "
        "final_answer."
    },
    "pipeline": {
        "coder": "You are the coder: write the full program with write_code, then ask the "
        "tester (`To tester: ...`) to run it; fix the draft when the reviewer sends it back.",
        "tester": "You are the tester: run the docstring examples with run_tests and report "
        "exactly which pass or fail to the reviewer (`To reviewer: ...`).",
        "reviewer": "You are the reviewer: if the tester reports that every example passes, "
        "submit the last draft with final_answer; otherwise send it back (`To coder: ...`).",
    },
}
"""System name -> agent -> the role prompt an LLM playing that agent gets."""
