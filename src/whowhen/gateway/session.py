"""How the gateway answers one run's calls: record (every call live), or replay a
recording up to an injection point, answer that call with the injected message, and go
live after it.

A run's calls are answered one at a time, in arrival order (a lock held across the
live call), so call k of a replay is compared with call k of the recording.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from whowhen.gateway.agents import AgentNames
from whowhen.gateway.exchange import Exchange, assistant_message, first_difference, normalise


class FidelityError(Exception):
    """A replayed run asked something the recording did not: the prefix is not the one
    recorded (an observation, a prompt or the call order changed)."""


class ForwardError(Exception):
    """The model behind the gateway failed for this call (after the client's retries)."""


@dataclass(frozen=True)
class Answer:
    """What the model behind the gateway said to one call."""

    content: str | None
    calls: tuple[tuple[str, str], ...]
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cached: bool = False


Forward = Callable[[dict[str, Any], str], Answer]
"""(normalised request body, agent) -> the live model's answer; raises ForwardError."""


@dataclass
class Plan:
    """Replay `recorded[:inject_at]` (each call checked against its recording), answer
    call `inject_at` with `injected`, then forward live. The empty plan records."""

    recorded: list[Exchange] = field(default_factory=list)
    inject_at: int | None = None
    injected: dict[str, Any] | None = None  # an assistant message
    volatile: tuple[str, ...] = ()


class Session:
    """One run behind the gateway: its plan, its forward function, its exchanges."""

    def __init__(
        self,
        run_id: str,
        forward: Forward,
        plan: Plan | None = None,
        listener: Callable[[Exchange], None] | None = None,
    ) -> None:
        self.run_id = run_id
        self.forward = forward
        self.plan = plan or Plan()
        self.listener = listener  # told of every answer before the framework gets it
        self.exchanges: list[Exchange] = []
        self.first_index = 0  # the index of the first call answered here (a run appended to)
        self.failure: str | None = None  # the fidelity error that stopped the replay
        self.model_errors: list[str] = []  # live calls the model failed (not the agent's)
        self.names = AgentNames()
        self._lock = threading.Lock()

    def answer(self, agent: str | None, body: dict[str, Any]) -> tuple[Exchange, dict[str, Any]]:
        """The exchange for this call and the assistant message to send back; an agent
        of None is named from the request (`AgentNames`)."""
        with self._lock:
            if self.failure:
                raise FidelityError(self.failure)
            agent = agent or self.names.name(body)
            index = self.first_index + len(self.exchanges)
            request = normalise(body, self.plan.volatile)
            try:
                exchange = self._answer(index, agent, request)
            except FidelityError as exc:
                self.failure = str(exc)
                raise
            except ForwardError as exc:
                self.model_errors.append(f"call {index} ({agent}): {exc}")
                raise
            self.exchanges.append(exchange)
            if self.listener is not None:
                self.listener(exchange)
            return exchange, exchange.message

    def _answer(self, index: int, agent: str, request: dict[str, Any]) -> Exchange:
        plan = self.plan
        if plan.inject_at is not None and index <= plan.inject_at:
            self._check(index, agent, request)
            # a replayed answer, and the injected one, carry the recorded answer's usage:
            # what producing that step cost, so no cost column marks the injection point
            old = plan.recorded[index]
            usage = (old.input_tokens, old.output_tokens, old.cost_usd)
            if index < plan.inject_at:
                return Exchange(index, agent, request, old.message, "replayed", *usage, True)
            assert plan.injected is not None
            return Exchange(index, agent, request, plan.injected, "injected", *usage)
        got = self.forward(request, agent)
        message = assistant_message(got.content, got.calls, index)
        return Exchange(index, agent, request, message, "live", got.input_tokens,
                        got.output_tokens, got.cost_usd, got.cached)  # fmt: skip

    def _check(self, index: int, agent: str, request: dict[str, Any]) -> None:
        recorded = self.plan.recorded
        if index >= len(recorded):
            raise FidelityError(f"call {index} ({agent}) is not in the recording")
        old = recorded[index]
        if old.agent != agent:
            raise FidelityError(f"call {index} comes from {agent}, recorded from {old.agent}")
        where = first_difference(old.request, request)
        if where:
            raise FidelityError(f"call {index} ({agent}) differs from the recording at {where}")
