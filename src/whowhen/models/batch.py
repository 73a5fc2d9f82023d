"""OpenAI Batch API for attribution: submit, poll, collect, resume. Half the price of live
calls, for runs that can wait.

What is already in the response cache is never submitted. The submitted batch's id is
kept in a state file named after the exact set of requests, so an interrupted run
(Ctrl-C, kill -9, a closed terminal) resumes polling the same batch instead of paying
for a second one. Collected answers go into the response cache like live ones.
"""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from whowhen.defaults import section_defaults
from whowhen.errors import WhowhenError
from whowhen.io import write_json
from whowhen.models.client import ClientStats, ModelClient
from whowhen.models.errors import ProviderError
from whowhen.models.openai_provider import reply_from_completion, request_body
from whowhen.models.provider import provider_kind
from whowhen.models.types import ChatRequest, ChatResult
from whowhen.schema import canonical_json, stable_id

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)
DONE = ("completed", "failed", "expired", "cancelled")
BATCH_DISCOUNT = 0.5


class BatchPending(WhowhenError):
    """The batch is still running; rerun the same command later to collect it."""


class BatchRunner:
    """Same `complete()` and `stats` as ModelClient, so attributors take either."""

    def __init__(
        self,
        client: ModelClient,
        state_dir: str | Path,
        poll_s: float | None = None,
        max_wait_s: float | None = None,
    ) -> None:
        if not provider_kind(client.spec.provider).batch:
            raise WhowhenError(
                f"batch mode uses the OpenAI Batch API; not for {client.spec.provider} models",
                field="llm.batch",
            )
        self.client, self.state_dir = client, Path(state_dir)
        # unset: the schema's `llm.batch_poll_s`, its one source
        self.poll_s = section_defaults("llm")["batch_poll_s"] if poll_s is None else poll_s
        self.max_wait_s = max_wait_s
        self.stats: ClientStats = client.stats

    def _sdk(self) -> openai.OpenAI:
        import openai  # deferred: the openai SDK is heavy (seconds to import)

        spec = self.client.spec
        return openai.OpenAI(
            api_key=spec.api_key(),
            base_url=spec.base_url,
            max_retries=3,
            timeout=self.client.timeout_s,
        )

    def complete(self, requests: Sequence[ChatRequest]) -> list[ChatResult]:
        """Identical requests are one line of the batch, paid and counted once; the others
        share its outcome as the live client's duplicates do (`ModelClient._shared`)."""
        cache, spec = self.client.cache, self.client.spec
        results: list[ChatResult | None] = [None] * len(requests)
        todo: dict[str, list[int]] = {}
        for key, idx in self.client._groups(requests).items():
            hit = cache.get(spec, requests[idx[0]], key) if cache else None
            if hit is None:
                todo[key] = idx
                continue
            self.stats.cache_hits += len(idx)
            for i in idx:
                results[i] = self.client._result(hit, cached=True, latency=0.0, attempts=0)
        if todo:
            answers = self._run_batch(requests, todo)
            for key, idx in todo.items():
                outcome = answers.get(key) or ProviderError("malformed", "missing from output")
                results[idx[0]] = first = self._to_result(requests[idx[0]], outcome, key)
                for i in idx[1:]:
                    results[i] = self.client._shared(first)
        return [r for r in results if r is not None]

    def _to_result(self, request: ChatRequest, outcome: object, key: str) -> ChatResult:
        if isinstance(outcome, ProviderError):
            return self.client._failed(str(outcome), 1, 0.0)
        reply = outcome  # a Reply
        self.stats.calls += 1
        if self.client.cache is not None:
            self.client.cache.put(self.client.spec, request, reply, key)
        result = self.client._result(reply, cached=False, latency=0.0, attempts=1)
        result.cost_usd *= BATCH_DISCOUNT
        self.stats.spent_usd += result.cost_usd
        return result

    def _run_batch(
        self, requests: Sequence[ChatRequest], todo: dict[str, list[int]]
    ) -> dict[str, object]:
        sdk = self._sdk()
        state = self.state_dir / f"{stable_id('batch', sorted(todo))}.json"
        if state.exists():
            batch_id = json.loads(state.read_text())["batch_id"]
            log.info("resuming batch %s (%d requests)", batch_id, len(todo))
        else:
            lines = [
                canonical_json(
                    {
                        "custom_id": key,
                        "method": "POST",
                        "url": "/v1/chat/completions",
                        "body": request_body(self.client.spec, requests[idx[0]]),
                    }
                )
                for key, idx in sorted(todo.items())
            ]
            upload = sdk.files.create(
                file=("batch.jsonl", io.BytesIO(("\n".join(lines) + "\n").encode())),
                purpose="batch",
            )
            batch = sdk.batches.create(
                input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
            )
            batch_id = batch.id
            write_json(
                state, {"batch_id": batch_id, "input_file_id": upload.id, "requests": len(lines)}
            )
            log.info("submitted batch %s (%d requests)", batch_id, len(lines))
        start = time.monotonic()
        while True:
            batch = sdk.batches.retrieve(batch_id)
            if batch.status in DONE:
                break
            if self.max_wait_s is not None and time.monotonic() - start >= self.max_wait_s:
                raise BatchPending(
                    f"batch {batch_id} is {batch.status}; rerun to collect it", path=str(state)
                )
            time.sleep(self.poll_s)
        answers: dict[str, object] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            for line in sdk.files.content(file_id).text.splitlines():
                if line.strip():
                    item = json.loads(line)
                    answers[item["custom_id"]] = _answer(item)
        if batch.status != "completed":
            log.warning(
                "batch %s ended %s: %d of %d answered",
                batch_id,
                batch.status,
                len(answers),
                len(todo),
            )
        state.unlink(missing_ok=True)
        return answers


def _answer(item: dict) -> object:
    response = item.get("response") or {}
    if item.get("error") or response.get("status_code") != 200:
        err = item.get("error") or {"message": f"HTTP {response.get('status_code')}"}
        return ProviderError("server", str(err.get("message", err))[:300])
    try:
        return reply_from_completion(response["body"])
    except ProviderError as exc:
        return exc
