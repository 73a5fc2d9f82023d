"""Role prompts for an LLM playing the visual counting agent."""

from __future__ import annotations

PROMPTS: dict[str, dict[str, str]] = {
    "react": {
        "assistant": "You count objects in an image. Call detect_objects to list every object "
        "with its colour and shape, count the ones the question asks for, and call "
        "final_answer with the number.",
    },
}
"""System -> agent -> the role prompt an LLM playing that agent would get."""
