"""The visual counting environment: `detect_objects` (connected components on the pixels)
and the numeric evaluator."""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

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
            "properties": {
                "image": {"type": "string", "description": "optional image ref"},
                "region": {
                    "type": "string",
                    "description": "optional: one cell of the 3x3 grid (top-left ... "
                    "bottom-right); lists the objects centred in it",
                },
                "colour": {"type": "string", "description": "optional: only this colour"},
            },
        },
    },
    FINAL_ANSWER_TOOL,
)
ROWS, COLS = ("top", "middle", "bottom"), ("left", "centre", "right")
REGIONS = tuple(f"{r}-{c}" for r in ROWS for c in COLS)
"""The grid cells `detect_objects(region=...)` accepts, in scanning order."""


def region_bounds(region: str) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) of a grid cell, x1 and y1 exclusive."""
    row, col = region.split("-")
    edges = [round(SIZE * k / 3) for k in range(4)]
    i, j = ROWS.index(row), COLS.index(col)
    return edges[j], edges[i], edges[j + 1], edges[i + 1]


def _centre(obj: Obj) -> tuple[float, float]:
    x0, y0, x1, y1 = obj[2]
    return (x0 + x1) / 2, (y0 + y1) / 2


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


def format_detections(objects: list[Obj], head: str = "", notes: tuple[str, ...] = ()) -> str:
    """The detections, one numbered line each, under a head line and above context notes."""
    lines = [
        f"{i}. {c} {s} ({x0},{y0},{x1},{y1})"
        for i, (c, s, (x0, y0, x1, y1)) in enumerate(objects, start=1)
    ]
    head = head or f"Detected {len(objects)} objects (colour shape (x0,y0,x1,y1)):"
    return "\n".join([head, *lines, *notes])


def _colours_line(objects: list[Obj]) -> str:
    counts = Counter(c for c, _, _ in objects)
    return "Colours seen: " + (", ".join(f"{c} {n}" for c, n in sorted(counts.items())) or "none")


def region_report(objects: list[Obj], region: str) -> str:
    """The objects centred in one grid cell, with how many others cross its edges."""
    x0, y0, x1, y1 = region_bounds(region)
    inside = [o for o in objects if x0 <= _centre(o)[0] < x1 and y0 <= _centre(o)[1] < y1]
    crossing = [
        o
        for o in objects
        if o not in inside and o[2][0] < x1 and o[2][2] >= x0 and o[2][1] < y1 and o[2][3] >= y0
    ]
    head = (
        f"Region {region} (x {x0}-{x1 - 1}, y {y0}-{y1 - 1}): {len(inside)} objects centred "
        "here (colour shape (x0,y0,x1,y1)):"
    )
    notes = (
        f"{len(crossing)} objects centred in neighbouring regions reach into this one "
        "(not listed).",
        f"{len(objects) - len(inside)} objects lie outside this region.",
    )
    return format_detections(inside, head, notes)


def parse_detections(text: str) -> list[tuple[str, str]]:
    """(colour, shape) of each line of detect_objects' output."""
    return [(m.group(1), m.group(2)) for m in DETECTION.finditer(text)]


@lru_cache(maxsize=256)
def _detected(ref: str) -> tuple[Obj, ...]:
    """The detections of one stored image (content-addressed, so caching by ref is safe):
    a run scans the same image a dozen times, by region and by colour."""
    return tuple(detect_objects(load_rgb(ref)))


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
        objects = list(_detected(ref))
        region, colour = args.get("region"), args.get("colour")
        if colour is not None:
            if colour not in PALETTE:
                return f"Error: unknown colour {colour!r} (one of {', '.join(PALETTE)})"
            objects = [o for o in objects if o[0] == colour]
        if region is not None:
            if region not in REGIONS:
                return f"Error: unknown region {region!r} (one of {', '.join(REGIONS)})"
            return region_report(objects, str(region))
        if colour is not None:
            head = f"Colour pass for {colour}: {len(objects)} objects (colour shape (x0,y0,x1,y1)):"
            return format_detections(objects, head, ("Objects of other colours are not listed.",))
        return format_detections(objects, "", (_colours_line(objects),))

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        return numeric(answer, gold)


Env = VisualCountEnv
