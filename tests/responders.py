"""Scripted answers for the test server that make a model-played team misbehave."""

from __future__ import annotations

from typing import Any

from whowhen.agents import protocol
from whowhen.standin.responders import default_responder


def looping(prompt: str, schema: dict[str, Any] | None) -> str:
    """Answers as the default model until the rules are shown, then only thinks aloud,
    counting the reminders it was sent: a run that never calls a tool."""
    if protocol.RULES_END not in prompt:
        return default_responder(prompt, schema)
    return f"Thought: let me think ({prompt.count(protocol.REMINDER)})."
