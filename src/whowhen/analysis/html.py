"""The HTML pieces every report section is built from: tables, inlined images, captions.

Their own module so the sections (report, metrics, feedback) share them without
importing one another.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

import polars as pl

LONG_TABLE = 30
"""Tables with more rows than this fold into a <details> (the report stays skimmable)."""


def table_html(frame: pl.DataFrame, digits: int = 3) -> str:
    """Every cell escaped, floats at `digits` places (the same text on every run)."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    body = []
    for row in frame.iter_rows():
        cells = "".join(
            f"<td>{html.escape(f'{v:.{digits}f}' if isinstance(v, float) else str(v))}</td>"
            for v in row
        )
        body.append(f"<tr>{cells}</tr>")
    table = (
        f"<div class='wide'><table><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )
    if frame.height > LONG_TABLE:
        return f"<details><summary>{frame.height} rows (show)</summary>{table}</details>"
    return table


def image_html(path: str | Path, alt: str) -> str:
    """The PNG inlined as a data URI, so the report stays one self-contained file."""
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


CAPTIONS_DIR = Path("workflow/report")
"""The figures' captions: the same .rst files the Snakemake report shows (one source)."""


def caption(name: str) -> str:
    """The figure's caption on one line; empty when it has none."""
    path = CAPTIONS_DIR / f"{name}.rst"
    return " ".join(path.read_text().split()) if path.exists() else ""
