"""The ball simulation behind event_timing, its renderer, and the pixel detector.

Balls live on integer pixel positions with integer velocities, so bouncing keeps them on
the grid, every disc is drawn symmetric about its centre, and a detector that takes the
centroid of a colour blob recovers the centre exactly. The zone and the line are drawn in
greys, which the detector ignores (it only looks at saturated pixels).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from whowhen.media import put_png

SIZE = 96
RADIUS = 4
MAX_SPEED = 4
"""Largest per-frame step along either axis (stated in the task text)."""
PALETTE: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40),
    "blue": (40, 90, 220),
    "green": (30, 160, 60),
    "yellow": (235, 190, 20),
}
BACKGROUND = (250, 250, 250)
ZONE_FILL = (228, 228, 228)
ZONE_EDGE = (150, 150, 150)
LINE = (120, 120, 120)
MIN_SATURATION = 60  # max - min channel: greys (zone, line, background) stay below it
MIN_AREA = 5

Point = tuple[int, int]
Track = tuple[Point, ...]
Zone = tuple[int, int, int, int]  # x0, x1, y0, y1 (inclusive)

_DISC = [
    (dx, dy)
    for dy in range(-RADIUS, RADIUS + 1)
    for dx in range(-RADIUS, RADIUS + 1)
    if dx * dx + dy * dy <= RADIUS * RADIUS + 2
]


def _bounce(p: int, v: int, lo: int, hi: int) -> tuple[int, int]:
    """One step along one axis, reflecting off the walls at lo and hi."""
    p += v
    if p < lo:
        return 2 * lo - p, -v
    if p > hi:
        return 2 * hi - p, -v
    return p, v


def simulate(rng: random.Random, n_balls: int, n_frames: int, size: int = SIZE) -> list[Track]:
    """Each ball's centre in every frame: constant velocity, elastic bounces off the walls."""
    lo, hi = RADIUS, size - 1 - RADIUS
    speeds = [s for s in range(-MAX_SPEED, MAX_SPEED + 1) if s]
    tracks = []
    for _ in range(n_balls):
        x, y = rng.randint(lo, hi), rng.randint(lo, hi)
        vx, vy = rng.choice(speeds), rng.choice(speeds)
        if max(abs(vx), abs(vy)) < 2:
            vx = 2 if vx > 0 else -2
        track = [(x, y)]
        for _ in range(n_frames - 1):
            x, vx = _bounce(x, vx, lo, hi)
            y, vy = _bounce(y, vy, lo, hi)
            track.append((x, y))
        tracks.append(tuple(track))
    return tracks


def min_gap(tracks: Sequence[Track]) -> float:
    """Smallest centre distance between two balls over the video (discs must not overlap)."""
    best = float("inf")
    for i in range(len(tracks)):
        for j in range(i + 1, len(tracks)):
            for (ax, ay), (bx, by) in zip(tracks[i], tracks[j], strict=True):
                best = min(best, ((ax - bx) ** 2 + (ay - by) ** 2) ** 0.5)
    return best


def in_zone(point: Point, zone: Zone) -> bool:
    x0, x1, y0, y1 = zone
    return x0 <= point[0] <= x1 and y0 <= point[1] <= y1


def render_frame(
    balls: Sequence[tuple[str, Point]], zone: Zone | None, line: int | None, size: int = SIZE
) -> np.ndarray:
    """One RGB frame: background, the zone or line in greys, then the balls on top."""
    img = np.empty((size, size, 3), np.uint8)
    img[:] = BACKGROUND
    if zone is not None:
        x0, x1, y0, y1 = zone
        img[y0 : y1 + 1, x0 : x1 + 1] = ZONE_EDGE
        img[y0 + 1 : y1, x0 + 1 : x1] = ZONE_FILL
    if line is not None:
        img[:, line] = LINE
    for colour, (x, y) in balls:
        for dx, dy in _DISC:
            img[y + dy, x + dx] = PALETTE[colour]
    return img


def render_video(
    colours: Sequence[str],
    tracks: Sequence[Track],
    zone: Zone | None,
    line: int | None,
    size: int = SIZE,
) -> tuple[str, ...]:
    """Every frame stored as PNG: the video's media references, in frame order."""
    return tuple(
        put_png(render_frame(list(zip(colours, frame, strict=True)), zone, line, size))
        for frame in zip(*tracks, strict=True)
    )


def _components(points: set[tuple[int, int]]) -> list[np.ndarray]:
    """4-connected components of a set of (y, x) pixels, each as an (n, 2) array.

    A small flood fill: frames are tiny and a ball is ~50 pixels, so this needs no scipy."""
    todo = set(points)
    found = []
    while todo:
        seed = min(todo)
        todo.discard(seed)
        stack, blob = [seed], [seed]
        while stack:
            y, x = stack.pop()
            for n in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                if n in todo:
                    todo.discard(n)
                    stack.append(n)
                    blob.append(n)
        found.append(np.array(blob))
    return found


def detect(pixels: np.ndarray) -> list[tuple[str, int, int]]:
    """(colour, x, y) of every saturated blob, by colour segmentation of the pixels alone.

    Greys are ignored; a blob's colour is the nearest palette colour and its centre the
    rounded centroid. Ordered by palette colour, then position."""
    r, g, b = (pixels[:, :, i].astype(np.int16) for i in range(3))
    saturated = np.maximum(np.maximum(r, g), b) - np.minimum(np.minimum(r, g), b)
    ys, xs = np.nonzero(saturated >= MIN_SATURATION)
    names = list(PALETTE)
    ref = np.array([PALETTE[n] for n in names], np.int16)
    colours = pixels[ys, xs].astype(np.int16)
    nearest = np.abs(colours[:, None, :] - ref[None, :, :]).sum(axis=2).argmin(axis=1)
    objects = []
    for k, name in enumerate(names):
        mine = nearest == k
        for blob in _components(set(zip(ys[mine].tolist(), xs[mine].tolist(), strict=True))):
            if len(blob) < MIN_AREA:
                continue
            y, x = blob.mean(axis=0)
            objects.append((name, int(np.floor(x + 0.5)), int(np.floor(y + 0.5))))
    return sorted(objects, key=lambda o: (names.index(o[0]), o[1], o[2]))
