"""The event timing environment: `sample_frames` and `detect_objects(frame)` on rendered
video frames, and its evaluator."""

from __future__ import annotations

from functools import lru_cache

from whowhen.benchmarks.base import AnswerEnv, Observation, Tool
from whowhen.benchmarks.event_timing.render import (
    PALETTE,
    detect,
)
from whowhen.benchmarks.event_timing.tasks import BENCHMARK, CATEGORY, MODALITY, ensure_media
from whowhen.benchmarks.scoring import exact, numeric
from whowhen.media import load_rgb
from whowhen.tools import FINAL_ANSWER_TOOL

TOOL_SPECS = (
    {
        "name": "sample_frames",
        "description": (
            "List the frames start, start+step, ... up to end (inclusive) and show them."
        ),
        "parameters": {
            "type": "object",
            "required": ["start", "end", "step"],
            "additionalProperties": False,
            "properties": {
                "start": {"type": "integer"},
                "end": {"type": "integer"},
                "step": {"type": "integer"},
            },
        },
    },
    {
        "name": "detect_objects",
        "description": "Detect the balls in one frame: each ball's colour and centre (x, y).",
        "parameters": {
            "type": "object",
            "required": ["frame"],
            "additionalProperties": False,
            "properties": {"frame": {"type": "integer"}},
        },
    },
    FINAL_ANSWER_TOOL,
)


def _int_arg(args: dict, key: str) -> int | None:
    try:
        return int(str(args.get(key, "")).strip())
    except ValueError:
        return None


@lru_cache(maxsize=4096)
def _detected(ref: str) -> tuple[tuple[str, int, int], ...]:
    """The balls of one stored frame (content-addressed, so caching by ref is safe): the
    runs re-check boundary frames and the orchestrator's tracker scans the same frames."""
    return tuple(detect(load_rgb(ref)))


class EventTimingEnv(AnswerEnv):
    benchmark, modality, category = BENCHMARK, MODALITY, CATEGORY

    def reset(self) -> str:
        self._start()
        ensure_media(self.task)
        return (
            "Answer the question about the video (its frames are attached). Tools: "
            "sample_frames(start, end, step), detect_objects(frame), final_answer(answer).\n\n"
            + self.task.question
        )

    def tools(self) -> dict[str, Tool]:
        frames = self.task.media
        last = len(frames) - 1

        def sample_frames(args: dict) -> Observation:
            start, end, step = (_int_arg(args, k) for k in ("start", "end", "step"))
            if start is None or end is None or step is None:
                return "Error: start, end and step must be integers"
            if not (0 <= start <= end <= last) or step < 1:
                return f"Error: need 0 <= start <= end <= {last} and step >= 1"
            picked = list(range(start, end + 1, step))
            text = f"Frames {', '.join(map(str, picked))} ({len(picked)} shown)."
            return text, tuple(frames[i] for i in picked)

        def detect_objects(args: dict) -> str:
            frame = _int_arg(args, "frame")
            if frame is None or not 0 <= frame <= last:
                return f"Error: frame must be an integer from 0 to {last}"
            found = _detected(frames[frame])
            if not found:
                return "No objects found."
            return "Objects: " + "; ".join(f"{c} ball at ({x}, {y})" for c, x, y in found) + "."

        return {"sample_frames": sample_frames, "detect_objects": detect_objects}

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        return exact(answer, gold) if gold in PALETTE else numeric(answer, gold)


Env = EventTimingEnv
