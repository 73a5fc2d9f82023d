"""Role prompts for an LLM playing the event timing systems' agents."""

from __future__ import annotations

PROMPTS: dict[str, dict[str, str]] = {
    "react": {
        "assistant": "You answer questions about a short video of bouncing balls. Use "
        "sample_frames to list and see frames, detect_objects to get each ball's colour and "
        "centre in a frame, and final_answer to answer.",
    },
    "orchestrator": {
        "orchestrator": "You coordinate: have the tracker track the balls over frame ranges, "
        "hand the question to the analyst, and pass the analyst's answer to the verifier.",
        "tracker": "You track balls with sample_frames and detect_objects over the frames you "
        "are given and report every detection to the orchestrator.",
        "analyst": "You answer the question from the tracker's reported detections, reasoning "
        "in your message, and end with 'Answer: <answer>.'",
        "verifier": "You recompute the answer from the tracker's detections; if it matches the "
        "analyst's, call final_answer, otherwise send it back to the orchestrator.",
    },
}
"""System name -> agent -> the role prompt an LLM playing that agent would get."""
