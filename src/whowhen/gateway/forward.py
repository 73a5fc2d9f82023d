"""The gateway's live calls go through the project's model client: the response cache
(a rerun repeats no call), retries, concurrency limits, usage and cost per call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whowhen.gateway.session import Answer, Forward, ForwardError
from whowhen.models.client import ModelClient
from whowhen.models.types import ChatRequest
from whowhen.schema import canonical_json


def client_forward(client: ModelClient | Mapping[str, ModelClient]) -> Forward:
    """A `Forward` that asks `client`'s model (or, given agent -> client, the calling
    agent's), the framework's body sent as it is."""
    by_agent = client if isinstance(client, Mapping) else None

    def forward(request: dict[str, Any], agent: str) -> Answer:
        model = by_agent[agent] if by_agent is not None else client
        chat = canonical_json(request) or "{}"
        [result] = model.complete([ChatRequest(messages=(), chat=chat, tag=agent)])
        if not result.ok:
            raise ForwardError(f"{model.spec.model_id}: {result.error}")
        usage = result.usage
        return Answer(result.text, result.tool_calls, usage.input_tokens,
                      usage.output_tokens, result.cost_usd, result.cached)  # fmt: skip

    return forward
