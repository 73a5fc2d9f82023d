"""Provider faults, classified so the client knows whether (and when) to retry."""

from __future__ import annotations

RETRYABLE = frozenset({"rate_limit", "server", "timeout", "connection", "malformed"})


class ProviderError(Exception):
    """kind: rate_limit | server | timeout | connection | malformed | bad_request | auth."""

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
