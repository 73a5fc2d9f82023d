"""Run ids and agent names: what the gateway takes in a URL or a header, and what may
name a recording file."""

from __future__ import annotations

import re

from whowhen.errors import preview

_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")


def check_name(what: str, value: str) -> str:
    """`value` when it may be a run id or agent name (`what`), else a ValueError naming it."""
    if not _NAME.fullmatch(value):
        raise ValueError(
            f"{what} {preview(value)} must be 1-128 letters, digits, '.', '_' or '-' "
            "(not starting with '.')"
        )
    return value
