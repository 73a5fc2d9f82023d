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


INFRA_PREFIX = "infra_error"
"""How a run's `end_reason` starts when the infrastructure, not the agent, failed."""


class InfraError(WhowhenError):
    """The infrastructure failed, not the agent: a tool or sandbox that did not start, a
    worker that died, a gateway without an answer, a provider error after retries.

    Why a type of its own: a run that meets one ends `infra_error: <reason>` and is kept
    out of natural failures, replay, taxonomy, injection, the dataset and feedback. An
    agent failure is a label; a broken installation is not, and counting it as one would
    teach attributors to blame agents for outages."""


def infra_reason(reason: str) -> str:
    """The `end_reason` of a run stopped by an infrastructure failure."""
    return f"{INFRA_PREFIX}: {reason}"


def is_infra(end_reason: str | None) -> bool:
    """Whether a run's `end_reason` records an infrastructure failure."""
    return bool(end_reason) and str(end_reason).startswith(INFRA_PREFIX)
