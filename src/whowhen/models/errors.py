"""Provider faults, classified so the client knows whether (and when) to retry."""

from __future__ import annotations

RETRYABLE = frozenset({"rate_limit", "server", "timeout", "connection", "malformed"})


class ProviderError(Exception):
    """kind: rate_limit | server | timeout | connection | malformed | bad_request | auth |
    too_large (a response past the size cap: not retried, the next would be too)."""

    def __init__(
        self, kind: str, message: str, retry_after: float | None = None, status: int | None = None
    ) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind, self.retry_after, self.status = kind, retry_after, status

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (the HTTP-date form is rare from model APIs; ignored)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def provider_cause(exc: BaseException) -> ProviderError | None:
    """The ProviderError `exc` was raised from (an SDK wraps what its HTTP client's hooks
    raise, e.g. the response-size cap, as a connection error), else None."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, ProviderError):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None
