"""Runs side by side where a run is mostly waiting: a model call, or a sandboxed program
(its namespaces and cgroups take milliseconds of setting up and tearing down, little of it
on a CPU). The runs of a shard (rollouts, warm starts) go up to the models' concurrency,
or a few at a time for scripted systems whose agents run programs, each with its own
environment and agent; other scripted runs stay one after another (they are CPU-bound,
and threads would only take turns)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


SANDBOX_RUNS = 3
"""Scripted runs with sandboxed programs at a time: a shard of them used a third of a core
when run one after another."""


def in_parallel(
    work: Callable[[T], R], items: Sequence[T], client: Any, at_once: int = 1
) -> Iterator[R]:
    """`work` over `items`, results in item order (so outputs do not depend on timing):
    up to `client.concurrency` at a time, or `at_once` (1 without a client)."""
    workers = min(max(getattr(client, "concurrency", 1), at_once), len(items))
    if workers <= 1:
        yield from map(work, items)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(work, items)
