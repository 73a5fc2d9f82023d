"""Checks the framework tests share: a warm start through the gateway replayed its
prefix call by call, answered the injection point with the injected action and went live
after it, asking the model only for the live calls."""

from __future__ import annotations

from typing import Any


def view(history: list) -> list[tuple]:
    """The steps as compared between runs (no timing, no cost)."""
    return [(s.actor, s.kind, s.content, s.tool, s.tool_args) for s in history]


def check_warm_start(
    warm: Any, history: list, k: int, index: int, asked: int, wrong_args: Any
) -> None:
    """`warm` (injected at step `k`, in the answer of exchange `index`) against the
    original run's `history`; `asked`: the model calls the server answered meanwhile."""
    sources = [e.source for e in warm.session.exchanges]
    assert sources[:index] == ["replayed"] * index
    assert sources[index] == "injected"
    assert set(sources[index + 1 :]) == {"live"}
    assert asked == sources.count("live")  # the prefix asked nothing
    assert view(warm.episode.history[:k]) == view(history[:k])  # the exact prefix
    assert warm.episode.history[k].tool_args == wrong_args


def injection_plan(original: Any, k: int, wrong: Any, adapter: Any) -> tuple[Any, int]:
    """(the gateway's plan that replays `original` and answers the call that held step `k`
    with `wrong` in the framework's own format, the index of that call)."""
    from whowhen.gateway.session import Plan

    exchange = next(e for e in original.session.exchanges if k in e.steps)
    message = adapter.write([wrong], exchange.message)
    return Plan(original.session.exchanges, exchange.index, message), exchange.index
