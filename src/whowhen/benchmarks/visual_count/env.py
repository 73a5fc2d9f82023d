"""The visual counting environment: `detect_objects` (connected components on the pixels)
and the numeric evaluator."""

from __future__ import annotations

import numpy as np

from whowhen.benchmarks.base import AnswerEnv, Observation, Tool
from whowhen.benchmarks.scoring import numeric
from whowhen.benchmarks.visual_count.tasks import (
    BENCHMARK,
    CATEGORY,
    DETECTION,
    MODALITY,
    PALETTE,
    SIZE,
    Obj,
    ensure_media,
)
from whowhen.media import load_rgb
from whowhen.tools import FINAL_ANSWER_TOOL

TOOL_SPECS = (
    {
        "name": "detect_objects",
        "description": "Detect the objects in the task's image: colour, shape and bounding "
        "box (x0, y0, x1, y1) of each.",
        "parameters": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"image": {"type": "string", "description": "optional image ref"}},
        },
    },
    FINAL_ANSWER_TOOL,
)


def _shape(component: np.ndarray) -> str:
    """The shape of one component (a boolean crop of its bounding box)."""
    tl, tr, bl, br = component[0, 0], component[0, -1], component[-1, 0], component[-1, -1]
    if tl and tr and bl and br:
        return "square"
    if bl and br and not (tl or tr):
        return "triangle"
    if not (tl or tr or bl or br):
        fill = component.mean()
        return "circle" if fill > 0.65 else "triangle"
    return "square" if component.mean() > 0.9 else "circle"


def detect_objects(rgb: np.ndarray, min_area: int = 12) -> list[Obj]:
    """Objects in reading order (top to bottom, then left to right), from the pixels."""
    from scipy import ndimage

    pixels = rgb.astype(int)
    background = pixels.min(axis=2) > 235
    colours = np.array(list(PALETTE.values()))
    nearest = np.argmin(((pixels[:, :, None, :] - colours) ** 2).sum(axis=3), axis=2)
    found: list[Obj] = []
    for k, name in enumerate(PALETTE):
        labels, _ = ndimage.label((nearest == k) & ~background, structure=np.ones((3, 3)))
        for label, box in enumerate(ndimage.find_objects(labels), start=1):
            if box is None:
                continue
            component = labels[box] == label
            if component.sum() < min_area:
                continue
            ys, xs = box
            bbox = (xs.start, ys.start, xs.stop - 1, ys.stop - 1)
            found.append((name, _shape(component), bbox))
    return sorted(found, key=lambda o: (o[2][1], o[2][0]))


def format_detections(objects: list[Obj]) -> str:
    lines = [
        f"{i}. {c} {s} ({x0},{y0},{x1},{y1})"
        for i, (c, s, (x0, y0, x1, y1)) in enumerate(objects, start=1)
    ]
    head = f"Detected {len(objects)} objects (colour shape (x0,y0,x1,y1)):"
    return "\n".join([head, *lines])


def parse_detections(text: str) -> list[tuple[str, str]]:
    """(colour, shape) of each line of detect_objects' output."""
    return [(m.group(1), m.group(2)) for m in DETECTION.finditer(text)]


class VisualCountEnv(AnswerEnv):
    benchmark, modality, category = BENCHMARK, MODALITY, CATEGORY

    def reset(self) -> str:
        self._start()
        ensure_media(self.task)
        return (
            f"Answer the question about the image ({SIZE}x{SIZE} pixels, coloured shapes on "
            "white). Tools: detect_objects(), final_answer(answer).\n\n"
            f"Question: {self.task.question}"
        )

    def tools(self) -> dict[str, Tool]:
        return {"detect_objects": self._detect}

    def _detect(self, args: dict) -> Observation:
        ref = str(args.get("image") or self.task.media[0])
        if ref not in self.task_media:
            return f"Error: no image {ref!r} in this task"
        return format_detections(detect_objects(load_rgb(ref)))

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        return numeric(answer, gold)


Env = VisualCountEnv
