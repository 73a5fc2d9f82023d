"""Content-addressed response cache on disk.

Key: SHA-256 of the canonical JSON of the model (provider, name, base URL, structured
output form) and the full request (messages with media by content hash, schema,
settings, sample index). One file per entry, written to a temp file and renamed, so
several Snakemake jobs can share the cache without locks: a reader sees a whole entry
or none, and two writers of one key write the same bytes. Keys and credentials are
never part of an entry.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from whowhen.io import write_text
from whowhen.models.spec import ModelSpec
from whowhen.models.types import ChatRequest, Reply, Usage
from whowhen.schema import canonical_json, stable_id


class ResponseCache:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(spec: ModelSpec, request: ChatRequest) -> str:
        return stable_id("response-cache-v1", spec.cache_view(), request.cache_view())

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, spec: ModelSpec, request: ChatRequest, key: str | None = None) -> Reply | None:
        """The cached reply, or None. `key` is `key(spec, request)` when the caller has it
        already (it hashes every image of the request)."""
        path = self._path(key or self.key(spec, request))
        try:
            data = json.loads(path.read_text())
            reply = Reply(
                data["text"],
                Usage(**data["usage"]),
                data.get("finish_reason"),
                tuple(tuple(c) for c in data.get("tool_calls", [])),
            )
        except (FileNotFoundError, json.JSONDecodeError, KeyError, TypeError):
            self.misses += 1
            return None
        self.hits += 1
        return reply

    def put(
        self, spec: ModelSpec, request: ChatRequest, reply: Reply, key: str | None = None
    ) -> None:
        entry: dict[str, Any] = {
            "model": spec.cache_view(),
            "request": request.cache_view(),
            "text": reply.text,
            "usage": asdict(reply.usage),
            "finish_reason": reply.finish_reason,
            "tool_calls": [list(c) for c in reply.tool_calls],
        }
        write_text(self._path(key or self.key(spec, request)), canonical_json(entry) or "")
