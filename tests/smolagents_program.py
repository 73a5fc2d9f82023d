"""A two-agent smolagents program: a manager hands the task to a calculator agent, which
multiplies with a tool. It knows nothing of whowhen: its model is smolagents'
`OpenAIModel`, which reads OPENAI_BASE_URL and OPENAI_API_KEY like any OpenAI program;
it prints its answer and exits 0 when the answer holds the expected number.
Its messages go out as plain text (`flatten_messages_as_text`): the GenAI OpenAI
instrumentation records a message's text only when it is a string, and drops smolagents'
default list of text parts.

    python tests/smolagents_program.py "Multiply 6 by 7." 42

Each agent declares itself in its instructions ("You are the calculator agent"), which
smolagents puts in the system prompt: that is how a recording behind the gateway names
it; smolagents' own agent spans name it by its `name`.
"""

from __future__ import annotations

import sys
from typing import Any

from smolagents import OpenAIModel, ToolCallingAgent, tool


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two numbers.

    Args:
        a: the first number
        b: the second number
    """
    return a * b


def build() -> ToolCallingAgent:
    """The manager, with the calculator agent as its managed agent."""
    model = OpenAIModel(model_id="any", flatten_messages_as_text=True)
    calculator = ToolCallingAgent(
        tools=[multiply],
        model=model,
        name="calculator",
        description="Multiplies numbers.",
        instructions="You are the calculator agent.",
        max_steps=3,
        verbosity_level=0,
    )
    return ToolCallingAgent(
        tools=[],
        model=model,
        managed_agents=[calculator],
        name="manager",
        instructions="You are the manager agent.",
        max_steps=3,
        verbosity_level=0,
    )


def main(task: str, expected: str) -> int:
    answer: Any = build().run(task)
    print(answer)
    return 0 if expected in str(answer) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
