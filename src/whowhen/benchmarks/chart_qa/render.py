"""Bar charts for chart QA: rendering (matplotlib, Agg) and reading them back from pixels.

The layout is fixed so that pixel geometry is exact: a 320x240 figure at 100 dpi, an axes
box at whole pixels, 1-pixel spines, bars without antialiasing. `read_bar_values` knows
none of the generating data: it finds the frame (long dark rows/columns), the bar colour
(the commonest saturated colour inside the frame), the bar columns, and converts each
bar's pixel height to a value with the y range the task states.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from whowhen.media import png_bytes

WIDTH, HEIGHT, DPI = 320, 240, 100
AXES_PX = (40, 30, 270, 200)  # left, bottom, width, height in pixels
BAR_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3")


def render_chart(
    values: tuple[int, ...], categories: tuple[str, ...], colour: str, ymax: int
) -> np.ndarray:
    """The chart as an (H, W, 3) uint8 array.

    Tick labels are plain figure texts and tick marks plain lines: matplotlib's tick
    machinery is most of the cost of a small chart."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    fig = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI)
    canvas = FigureCanvasAgg(fig)
    left, bottom, width, height = AXES_PX
    ax = fig.add_axes((left / WIDTH, bottom / HEIGHT, width / WIDTH, height / HEIGHT))
    # bars above the spines (zorder 3) so their full height is visible
    ax.bar(range(len(values)), values, 0.6, color=colour, antialiased=False, lw=0, zorder=3)
    ax.set_ylim(0, ymax)
    ax.set_xlim(-0.5, len(values) - 0.5)
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_antialiased(False)
        spine.set_linewidth(72 / DPI)  # one pixel
        spine.set_color("black")
    x0, x1 = (left - 4) / WIDTH, left / WIDTH
    for v in range(0, ymax + 1, max(1, ymax // 5)):
        y = (bottom + height * v / ymax) / HEIGHT
        fig.text(x0 - 2 / WIDTH, y, str(v), ha="right", va="center", fontsize=7)
        fig.add_artist(Line2D([x0, x1], [y, y], color="black", lw=72 / DPI, antialiased=False))
    for i, name in enumerate(categories):
        x = (left + width * (i + 0.5) / len(values)) / WIDTH
        fig.text(x, (bottom - 6) / HEIGHT, name, ha="center", va="top", fontsize=7)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


@lru_cache(maxsize=4096)
def chart_png(
    values: tuple[int, ...], categories: tuple[str, ...], colour: str, ymax: int
) -> bytes:
    """PNG bytes of a chart; cached because make_tasks and every reset ask for the same one."""
    return png_bytes(render_chart(values, categories, colour, ymax))


def _runs(indices: np.ndarray) -> list[np.ndarray]:
    """Consecutive runs of sorted indices."""
    if indices.size == 0:
        return []
    return np.split(indices, np.where(np.diff(indices) > 1)[0] + 1)


def _planes(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three colour channels as int32 planes (channel-wise ops are fast in numpy)."""
    return (
        rgb[:, :, 0].astype(np.int32),
        rgb[:, :, 1].astype(np.int32),
        rgb[:, :, 2].astype(np.int32),
    )


def find_frame(rgb: np.ndarray) -> tuple[float, float, int, int] | None:
    """(top spine centre row, bottom spine centre row, left inner column, right inner column)
    of the axes frame: the outermost long dark rows and columns."""
    r, g, b = _planes(rgb)
    dark = (r < 80) & (g < 80) & (b < 80)
    h, w = dark.shape
    rows = _runs(np.where(dark.sum(axis=1) > 0.4 * w)[0])
    cols = _runs(np.where(dark.sum(axis=0) > 0.4 * h)[0])
    if len(rows) < 2 or len(cols) < 2:
        return None
    return float(rows[0].mean()), float(rows[-1].mean()), int(cols[0][-1]) + 1, int(cols[-1][0])


def read_bar_values(rgb: np.ndarray, ymax: int) -> list[int] | None:
    """Bar values left to right, read from the pixels; None if no frame or bars are found.

    The bar colour is the commonest saturated colour inside the frame; a bar is a run of
    columns holding it, and its value is its pixel height over the pixels per axis unit
    (the distance between the top and bottom spines over the stated range)."""
    frame = find_frame(rgb)
    if frame is None:
        return None
    top, bottom, left, right = frame
    r, g, b = _planes(rgb[int(top) + 1 : int(bottom), left:right])
    spread = np.maximum(np.maximum(r, g), b) - np.minimum(np.minimum(r, g), b)
    saturated = spread > 40
    if not saturated.any():
        return None
    packed = (r[saturated] << 16) | (g[saturated] << 8) | b[saturated]
    colours, counts = np.unique(packed, return_counts=True)
    code = int(colours[int(np.argmax(counts))])
    r, g, b = _planes(rgb[:, left:right])
    mask = (
        (np.abs(r - (code >> 16)) <= 8)
        & (np.abs(g - ((code >> 8) & 255)) <= 8)
        & (np.abs(b - (code & 255)) <= 8)
    )
    px_per_unit = (bottom - top) / ymax
    values = []
    for run in _runs(np.where(mask.any(axis=0))[0]):
        if run.size < 3:  # a stray pixel column, not a bar
            continue
        height = int(mask[:, run[run.size // 2]].sum())
        values.append(round(height / px_per_unit))
    return values or None
