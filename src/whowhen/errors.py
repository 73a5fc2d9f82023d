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
