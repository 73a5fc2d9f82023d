"""One exception type for every user-facing problem.

Why: the pipeline promises a *one-line* message naming the file, record and field
for bad input. Raising this (instead of KeyError/ArrowInvalid deep in a stack)
lets the entry points print `error: <message>` and exit 1 without a traceback.
"""

from __future__ import annotations


class WhowhenError(Exception):
    """A problem with the user's input, config or files; the message is the report."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        record: str | None = None,
        field: str | None = None,
    ) -> None:
        where = ": ".join(
            str(p) for p in (path, record and f"record {record}", field and f"field '{field}'") if p
        )
        self.path, self.record, self.field = path, record, field
        super().__init__(f"{where}: {message}" if where else message)


def preview(value: object, limit: int = 80, *, quote: bool = True) -> str:
    """`repr(value)` (`str` with quote=False) cut to `limit` characters, with the full size:
    an error line quotes the bad value, and a 10 MB value must not make a 10 MB line."""
    text = repr(value) if quote else str(value)
    if len(text) <= limit:
        return text
    size = len(value) if isinstance(value, str) else len(text)
    return f"{text[:limit]}…({size} chars)"
