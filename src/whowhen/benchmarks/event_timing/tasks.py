"""Event timing in short videos (video understanding): coloured balls bounce around a
frame; questions ask when a ball first enters a zone, which ball enters it first, or how
often a ball crosses a vertical line.

Gold answers come from the simulation; the agents see only frames (PNG media) and two
tools that work on the pixels: `sample_frames` lists and shows frames, `detect_objects`
segments one frame by colour. Scenes are regenerated until the asked event happens and
is visible when every 4th frame is checked first (the first visit of the zone covers a
multiple of 4), so a coarse-to-fine search is always sound.
"""

from __future__ import annotations

import functools
import itertools
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from whowhen.benchmarks.base import integer, section_schema
from whowhen.benchmarks.event_timing.render import (
    MAX_SPEED,
    PALETTE,
    RADIUS,
    SIZE,
    Track,
    Zone,
    in_zone,
    min_gap,
    render_video,
    simulate,
)
from whowhen.media import media_path
from whowhen.schema import stable_id

BENCHMARK = "event_timing"
MODALITY = "video"
CATEGORY = "video_understanding"
CONFIG_SCHEMA = section_schema(n_frames=integer(12, 60, 41), size=integer(64, 256, 96))
"""JSON Schema of this benchmark's section under `benchmarks:` in the config."""
N_FRAMES = 41
"""Frames per video by default: longer videos mean longer scans (realistic runs)."""
KINDS = ("enter", "first", "cross")
COARSE = 4
"""The stride at which the first visit of the zone is guaranteed to be seen."""
QUESTIONS = {
    "enter": "In which frame does the {colour} ball first enter the zone? "
    "Answer with the frame index.",
    "first": "Which ball enters the zone first? Answer with its colour.",
    "cross": "How many times does the {colour} ball cross the line x = {line}? "
    "Answer with a number.",
}
_SCENE = (
    "The video has {n} frames (0 to {last}) of {size}x{size} pixels; x grows to the right "
    "and y downwards. It shows {k} balls ({names}) that move at constant speed, at most "
    "{speed} pixels per frame along each axis, and bounce off the walls. "
)
_ZONE = (
    "A grey rectangle marks the zone: x from {x0} to {x1} and y from {y0} to {y1}; a ball "
    "is in the zone when its centre is inside it (edges included)."
)
_LINE = (
    "A grey vertical line is drawn at x = {line}; a ball crosses it when its centre moves "
    "from one side of the line to the other between two frames."
)
N_FRAMES_RE = re.compile(r"The video has (\d+) frames")
ZONE_RE = re.compile(r"x from (\d+) to (\d+) and y from (\d+) to (\d+)")
LINE_RE = re.compile(r"vertical line is drawn at x = (\d+)")
ENTER_RE = re.compile(r"In which frame does the (\w+) ball first enter the zone\?")
CROSS_RE = re.compile(r"How many times does the (\w+) ball cross the line")
OBJECT_RE = re.compile(r"(\w+) ball at \((\d+), (\d+)\)")


@dataclass(frozen=True)
class Task:
    task_id: str
    question: str  # the scene description and the question: all an agent is told
    kind: str
    target: str  # the asked ball's colour ("" for 'first')
    colours: tuple[str, ...]
    tracks: tuple[Track, ...]  # hidden: each ball's centre per frame
    zone: Zone | None
    line: int | None
    answer: str
    media: tuple[str, ...]  # every frame, in order
    size: int = SIZE


Detections = dict[int, dict[str, tuple[int, int]]]
"""frame -> colour -> centre: what an agent has detected."""


@dataclass(frozen=True)
class Spec:
    """What an agent reads from the task text."""

    kind: str
    colour: str
    n_frames: int
    zone: Zone | None
    line: int | None


def parse_task(text: str) -> Spec:
    """The question's kind, ball, frame count and zone or line, from the task text."""
    n = int(N_FRAMES_RE.search(text).group(1))
    zone_m, line_m = ZONE_RE.search(text), LINE_RE.search(text)
    zone = tuple(int(v) for v in zone_m.groups()) if zone_m else None
    line = int(line_m.group(1)) if line_m else None
    if m := ENTER_RE.search(text):
        return Spec("enter", m.group(1), n, zone, line)
    if m := CROSS_RE.search(text):
        return Spec("cross", m.group(1), n, zone, line)
    if "Which ball enters the zone first?" in text:
        return Spec("first", "", n, zone, line)
    raise ValueError("cannot parse the question")


def first_inside(points: Sequence[tuple[int, tuple[int, int]]], zone: Zone) -> int | None:
    """The first frame (of (frame, centre) pairs, in frame order) with the centre in the zone."""
    return next((f for f, p in sorted(points) if in_zone(p, zone)), None)


def crossings(xs: Sequence[int], line: int) -> int:
    """Side changes of a ball's centre x (in frame order); a centre on the line has no side."""
    sides = [x > line for x in xs if x != line]
    return sum(a != b for a, b in itertools.pairwise(sides))


def ball_in_zone(spec: Spec, objects: dict[str, tuple[int, int]]) -> str | None:
    """The ball that counts as 'in the zone' in one frame (the asked one, or any)."""
    for colour, point in objects.items():
        if (spec.kind == "first" or colour == spec.colour) and in_zone(point, spec.zone):
            return colour
    return None


def summarize(spec: Spec, track: Detections) -> tuple[dict[str, str], str]:
    """Per-ball values (first frame inside / crossings) over the detected frames, and the
    answer they give."""
    colours = [c for c in PALETTE if any(c in objs for objs in track.values())]
    items: dict[str, str] = {}
    for c in colours:
        points = [(f, objs[c]) for f, objs in sorted(track.items()) if c in objs]
        if spec.kind == "cross":
            items[c] = str(crossings([p[0] for _, p in points], spec.line))
        else:
            first = first_inside(points, spec.zone)
            items[c] = "none" if first is None else str(first)
    if spec.kind != "first":
        return items, items.get(spec.colour, "none")
    entered = [(int(v), c) for c, v in items.items() if v != "none"]
    return items, min(entered)[1] if entered else "none"


def _first_visit_seen(flags: Sequence[bool], stride: int) -> bool:
    """Whether the first visit (a run of True) contains a frame that is a multiple of stride."""
    entry = next((i for i, f in enumerate(flags) if f), None)
    if entry is None or entry == 0:
        return False
    seen = -(-entry // stride) * stride
    return seen < len(flags) and all(flags[entry : seen + 1])


def _draw(rng: random.Random, kind: str, n_frames: int, size: int) -> dict | None:
    """One candidate scene for `kind`, or None if the asked event is missing or ambiguous."""
    colours = rng.sample(sorted(PALETTE), rng.choice((2, 3)))
    tracks = simulate(rng, len(colours), n_frames, size)
    if min_gap(tracks) < 2 * RADIUS + 2:  # overlapping discs would hide each other
        return None
    target = rng.choice(colours)
    if kind == "cross":  # lines stay >= size/6 from the walls: no two crossings in 2 frames
        lines = list(range(size // 6, size - size // 6))
        rng.shuffle(lines)
        want = rng.choice((0, 1, 2))
        xs = [x for x, _ in tracks[colours.index(target)]]
        for line in lines:
            if line not in xs and crossings(xs, line) == want:
                return dict(
                    colours=colours, tracks=tracks, target=target, line=line, answer=str(want)
                )
        return None
    w, h = rng.randint(20, 36), rng.randint(20, 36)
    x0, y0 = rng.randint(12, size - 12 - w), rng.randint(12, size - 12 - h)
    zone = (x0, x0 + w, y0, y0 + h)
    flags = {c: [in_zone(p, zone) for p in t] for c, t in zip(colours, tracks, strict=True)}
    if kind == "enter":
        if not _first_visit_seen(flags[target], COARSE):
            return None
        answer = str(flags[target].index(True))
        return dict(colours=colours, tracks=tracks, target=target, zone=zone, answer=answer)
    if any(f[0] for f in flags.values()):
        return None
    entries = {c: f.index(True) for c, f in flags.items() if any(f)}
    if not entries:
        return None
    earliest = min(entries.values())
    winners = [c for c, e in entries.items() if e == earliest]
    if len(winners) != 1 or not _first_visit_seen(flags[winners[0]], COARSE):
        return None
    return dict(colours=colours, tracks=tracks, target="", zone=zone, answer=winners[0])


def scene_text(
    colours: Sequence[str], zone: Zone | None, line: int | None, n_frames: int, size: int
) -> str:
    names = ", ".join(colours[:-1]) + f" and {colours[-1]}"
    text = _SCENE.format(
        n=n_frames, last=n_frames - 1, size=size, k=len(colours), names=names, speed=MAX_SPEED
    )
    if zone is not None:
        x0, x1, y0, y1 = zone
        return text + _ZONE.format(x0=x0, x1=x1, y0=y0, y1=y1)
    return text + _LINE.format(line=line)


def generate_tasks(
    n_tasks: int, seed: int, n_frames: int = N_FRAMES, size: int = SIZE
) -> list[Task]:
    if n_frames < 2 * COARSE + 1:
        raise ValueError(f"event_timing needs at least {2 * COARSE + 1} frames")
    tasks = []
    for index in range(n_tasks):
        kind = KINDS[index % len(KINDS)]
        rng = random.Random(f"{seed}:event:{index}")
        scene = None
        while scene is None:
            scene = _draw(rng, kind, n_frames, size)
        zone, line = scene.get("zone"), scene.get("line")
        question = scene_text(scene["colours"], zone, line, n_frames, size) + (
            "\n\nQuestion: " + QUESTIONS[kind].format(colour=scene["target"], line=line)
        )
        tracks = tuple(scene["tracks"])
        media = render_video(scene["colours"], tracks, zone, line, size)
        task_id = f"evt-{stable_id(BENCHMARK, seed, index)[:10]}"
        tasks.append(
            Task(
                task_id,
                question,
                kind,
                scene["target"],
                tuple(scene["colours"]),
                tracks,
                zone,
                line,
                scene["answer"],
                media,
                size,
            )
        )
    return tasks


def ensure_media(task: Task) -> None:
    """Re-render the frames if the media store (e.g. a new WHOWHEN_MEDIA_DIR) lacks them;
    the same pixels give the same references."""
    if not all(media_path(ref).exists() for ref in task.media):
        render_video(task.colours, task.tracks, task.zone, task.line, task.size)


def parse_objects(text: str) -> dict[str, tuple[int, int]]:
    """colour -> centre, from a detect_objects observation (first blob of each colour)."""
    found: dict[str, tuple[int, int]] = {}
    for colour, x, y in OBJECT_RE.findall(text):
        found.setdefault(colour, (int(x), int(y)))
    return found


@functools.lru_cache(maxsize=16)
def _cached(cfg_items: tuple, seed: int) -> tuple[Task, ...]:
    cfg = dict(cfg_items)
    return tuple(
        generate_tasks(cfg["n_tasks"], seed, cfg.get("n_frames", N_FRAMES), cfg.get("size", SIZE))
    )


def make_tasks(cfg: dict, seed: int) -> list[Task]:
    """The registry's entry point; memoized (the continuation stage asks again), with the
    frames re-stored if the media store changed since."""
    try:
        tasks = list(_cached(tuple(sorted(cfg.items())), seed))
    except TypeError:  # an unhashable config value: generate without the memo
        tasks = generate_tasks(
            cfg["n_tasks"], seed, cfg.get("n_frames", N_FRAMES), cfg.get("size", SIZE)
        )
    for task in tasks:
        ensure_media(task)
    return tasks
