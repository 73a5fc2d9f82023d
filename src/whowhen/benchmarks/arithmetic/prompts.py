"""Role prompts for an LLM playing the arithmetic systems' agents."""

from __future__ import annotations

from whowhen.runtime import Step

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
    "expert_chat": {
        "Arithmetic_Expert": "You are the arithmetic expert of a group chat: read the word "
        "problem, state the start and how many operations it has, and confirm the running "
        "total when the Python_Expert reports progress.",
        "Python_Expert": "You are the Python expert: compute one operation per program, quoting "
        "it in a python code block for the Computer_terminal to run, carry the running total, "
        "and propose the answer when all operations are done.",
        "Verification_Expert": "You are the verification expert: count the programs against the "
        "problem's operations (send a short count back), re-run the last step, then give the "
        "final answer and end with TERMINATE.",
    },
}
"""System -> agent -> the role prompt an LLM playing that agent gets."""

_TASK = (
    "Solve the word problem. Tools: calculator(expression), final_answer(answer).\n\n"
    "Problem: Ann has 3 pens. Then Ann gets 4 more pens. How many pens does Ann have now?"
)
EXAMPLES: dict[str, tuple[Step, ...]] = {
    "react": (
        Step(0, "user", "message", _TASK),
        Step(1, "assistant", "action", "Ann gets 4 more: add.", "calculator",
             {"expression": "3 + 4"}),
        Step(2, "calculator", "observation", "7"),
        Step(3, "assistant", "action", "That was the only change.", "final_answer",
             {"answer": "7"}),
    ),
    "solver_verifier": (
        Step(0, "user", "message", _TASK),
        Step(1, "solver", "action", "Ann gets 4 more: add.", "calculator",
             {"expression": "3 + 4"}),
        Step(2, "calculator", "observation", "7"),
        Step(3, "solver", "message", "To verifier: Proposed answer: 7."),
        Step(4, "verifier", "action", "The problem adds 4, and so did the solver.",
             "final_answer", {"answer": "7"}),
    ),
}  # fmt: skip
"""System -> a worked run shown to a model playing it (in its turn format)."""
