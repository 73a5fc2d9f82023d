"""Model-played runs side by side: a model call is mostly waiting, so the runs of a
shard (rollouts, warm starts) go up to the models' concurrency at a time, each with its
own environment and agent; scripted runs stay one after another."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def in_parallel(work: Callable[[T], R], items: Sequence[T], client: Any) -> Iterator[R]:
    """`work` over `items`, results in item order (so outputs do not depend on timing):
    up to `client.concurrency` at a time (1 without a client)."""
    workers = min(getattr(client, "concurrency", 1), len(items))
    if workers <= 1:
        yield from map(work, items)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(work, items)
