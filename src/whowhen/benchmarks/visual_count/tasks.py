"""Visual counting (image): scenes of non-overlapping coloured circles, squares and
triangles on white; the question asks how many objects of one colour (and shape) there are.

`detect_objects` works on the pixels only: each pixel gets its nearest palette colour,
connected components per colour are the objects, and a component's shape comes from which
corners of its bounding box it fills (square: all four, triangle: the bottom two, circle:
none), with the fill ratio as a fallback.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from whowhen.benchmarks.base import integer, section_schema
from whowhen.media import media_path, png_bytes, put_bytes
from whowhen.schema import stable_id

BENCHMARK = "visual_count"
MODALITY = "image"
CATEGORY = "visual_perception"
CONFIG_SCHEMA = section_schema(min_objects=integer(1, 20, 5), max_objects=integer(1, 20, 15))
"""JSON Schema of this benchmark's section under `benchmarks:` in the config."""
SIZE = 160
GAP = 4
PALETTE: dict[str, tuple[int, int, int]] = {
    "red": (220, 50, 47),
    "green": (40, 160, 70),
    "blue": (38, 110, 210),
    "yellow": (235, 185, 20),
}
SHAPES = ("circle", "square", "triangle")
QUESTION = re.compile(r"How many (\w+) (circle|square|triangle|object)s are in the image\?")
DETECTION = re.compile(r"^\d+\. (\w+) (\w+) \((\d+),(\d+),(\d+),(\d+)\)$", re.M)

Obj = tuple[str, str, tuple[int, int, int, int]]  # colour, shape, bbox (x0, y0, x1, y1)


@dataclass(frozen=True)
class Task:
    task_id: str
    question: str
    answer: str
    media: tuple[str, ...]
    objects: tuple[Obj, ...]  # hidden: the generating scene
    colour: str
    shape: str | None  # None: count every object of the colour


def _place(rng: random.Random, n: int) -> list[tuple[int, int, int]]:
    """(x, y, size) of up to `n` boxes, at least GAP pixels apart, inside the image."""
    boxes: list[tuple[int, int, int]] = []
    for _ in range(n * 60):
        if len(boxes) == n:
            break
        s = rng.randint(14, 22)
        x, y = rng.randint(2, SIZE - s - 2), rng.randint(2, SIZE - s - 2)
        if all(
            x + s + GAP <= bx or bx + bs + GAP <= x or y + s + GAP <= by or by + bs + GAP <= y
            for bx, by, bs in boxes
        ):
            boxes.append((x, y, s))
    return boxes


def render_scene(objects: tuple[Obj, ...]) -> np.ndarray:
    """The scene as an (H, W, 3) uint8 array (PIL draws without antialiasing)."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (SIZE, SIZE), "white")
    draw = ImageDraw.Draw(img)
    for colour, shape, (x0, y0, x1, y1) in objects:
        fill = PALETTE[colour]
        if shape == "circle":
            draw.ellipse((x0, y0, x1, y1), fill=fill)
        elif shape == "square":
            draw.rectangle((x0, y0, x1, y1), fill=fill)
        else:
            draw.polygon(((x0 + x1) / 2, y0, x0, y1, x1, y1), fill=fill)
    return np.asarray(img)


@lru_cache(maxsize=4096)
def scene_png(objects: tuple[Obj, ...]) -> bytes:
    return png_bytes(render_scene(objects))


@lru_cache(maxsize=64)
def _generate(n_tasks: int, seed: int, min_objects: int, max_objects: int) -> tuple[Task, ...]:
    tasks = []
    for index in range(n_tasks):
        rng = random.Random(f"{seed}:count:{index}")
        colours = rng.sample(list(PALETTE), rng.randint(3, 4))
        boxes = _place(rng, rng.randint(min_objects, max_objects))
        objects = tuple(
            (rng.choice(colours), rng.choice(SHAPES), (x, y, x + s - 1, y + s - 1))
            for x, y, s in boxes
        )
        colour, shape, _ = rng.choice(objects)
        if rng.random() < 0.3:
            shape = None
        count = sum(c == colour and (shape is None or s == shape) for c, s, _ in objects)
        question = f"How many {colour} {shape or 'object'}s are in the image?"
        ref = put_bytes(scene_png(objects), "png")
        task_id = f"count-{stable_id(BENCHMARK, seed, index)[:10]}"
        tasks.append(Task(task_id, question, str(count), (ref,), objects, colour, shape))
    return tuple(tasks)


def ensure_media(task: Task) -> None:
    """Write the scene into the current media store if it is not there (bytes are cached)."""
    if not media_path(task.media[0]).exists():
        put_bytes(scene_png(task.objects), "png")


def generate_tasks(
    n_tasks: int, seed: int, min_objects: int = 5, max_objects: int = 15
) -> list[Task]:
    tasks = list(_generate(n_tasks, seed, min_objects, max_objects))
    for task in tasks:
        ensure_media(task)
    return tasks


def parse_question(text: str) -> tuple[str, str | None]:
    """(colour, shape or None for any shape) asked about."""
    m = QUESTION.search(text)
    if not m:
        raise ValueError("cannot parse the question")
    return m.group(1), None if m.group(2) == "object" else m.group(2)


def make_tasks(cfg: dict, seed: int) -> list[Task]:
    """The registry's entry point: tasks from the benchmark's config section."""
    return generate_tasks(
        cfg["n_tasks"], seed, int(cfg.get("min_objects", 5)), int(cfg.get("max_objects", 15))
    )
