"""Content-addressed media store: images and video frames referenced from `steps.media`.

A reference is `<sha256>.<ext>`; the file lives at `<root>/<first two hex>/<ref>`. The same
bytes always get the same reference, so shards that render the same chart share one file,
reruns rewrite nothing, and a reference proves what the agent saw.

The root is `results/media` (relative to the working directory, as Snakemake runs) unless
the environment variable WHOWHEN_MEDIA_DIR names another.
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import numpy as np
from PIL import Image

from whowhen.io import atomic_path

DEFAULT_ROOT = "results/media"


def media_root() -> Path:
    return Path(os.environ.get("WHOWHEN_MEDIA_DIR", DEFAULT_ROOT))


def media_path(ref: str) -> Path:
    return media_root() / ref[:2] / ref


def put_bytes(data: bytes, ext: str) -> str:
    """Store `data` (if not already there) and return its reference."""
    ref = f"{hashlib.sha256(data).hexdigest()}.{ext.lstrip('.')}"
    path = media_path(ref)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            Path(tmp).write_bytes(data)
    return ref


def png_bytes(pixels: np.ndarray) -> bytes:
    """Deterministic PNG bytes (no timestamps or metadata) of an RGB uint8 array."""
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels, dtype=np.uint8), "RGB").save(
        buf, format="PNG", optimize=False, compress_level=6
    )
    return buf.getvalue()


def put_png(pixels: np.ndarray) -> str:
    return put_bytes(png_bytes(pixels), "png")


def put_file(path: str | Path) -> str:
    """Copy an outside file (a dataset's image) into the store."""
    path = Path(path)
    return put_bytes(path.read_bytes(), path.suffix or ".bin")


def load_bytes(ref: str) -> bytes:
    return media_path(ref).read_bytes()


def load_rgb(ref: str) -> np.ndarray:
    """The image as an (H, W, 3) uint8 array: what perception tools work on."""
    with Image.open(media_path(ref)) as img:
        return np.asarray(img.convert("RGB"))
