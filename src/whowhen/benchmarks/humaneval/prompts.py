"""Role prompts for an LLM playing the HumanEval systems' agents."""

from __future__ import annotations

PROMPTS: dict[str, dict[str, str]] = {
    "code_act": {
        "assistant": "You solve a Python coding task by writing programs: plan, run your "
        "solution on the docstring examples with run_python, look at any failing call and "
        "fix it, try a few inputs of your own (empty, one-item, reordered), then submit the "
        "full program with final_answer."
    },
    "pipeline": {
        "coder": "You are the coder: tell the tester your plan (`To tester: ...`), write the "
        "full program with write_code, try an example yourself with run_python, then ask the "
        "tester to run it; when the reviewer sends the draft back, reproduce the failing call "
        "and save a fix; answer the reviewer's questions (`To reviewer: ...`).",
        "tester": "You are the tester: say which extra inputs you will try, run the docstring "
        "examples with run_tests (or type the saved draft into run_python with the example "
        "checks), try your own inputs with run_python, and report exactly which pass or "
        "fail to the reviewer (`To reviewer: ...`).",
        "reviewer": "You are the reviewer: if the tester reports that every example passes, "
        "you may ask for a re-run (`To tester: ...`) or question the coder (`To coder: ...`), "
        "then submit the last draft with final_answer; otherwise send it back with the "
        "failing call (`To coder: ...`).",
    },
}
"""System name -> agent -> the role prompt an LLM playing that agent gets."""
