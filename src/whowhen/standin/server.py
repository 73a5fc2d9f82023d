"""A scripted HTTP server that speaks the OpenAI Chat Completions endpoint and Gemini's
generateContent, for tests, benchmarks and the `testserver` config profile.

It answers with a deterministic function of the request (by default the stand-in's
`default_responder`, the same rules as the in-process `scripted/standin`, so the two
agree on answers and token counts), and can be told to be slow
or to fail a seeded share of calls with 429 + Retry-After, 500, a hang past the
client's timeout, or a malformed body. Every request is counted; the Authorization
header is checked to be present but never stored.

    python -m whowhen.standin.server --port 8765 [--latency 0.2] [--fail-rate 0.2]

It lives with the responders (above the model layer, not in it): it is a test double of
a model server, not part of the client, and its responders read benchmark tasks.
"""

from __future__ import annotations

import argparse
import email.policy
import json
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from whowhen.models.scripted_provider import ACTION_LINE, chat_turns, flatten
from whowhen.standin import user_agent
from whowhen.standin.responders import attribution_responder, default_responder, has_role

Responder = Callable[[str, dict[str, Any] | None], str]
__all__ = [
    "Behaviour",
    "TestServer",
    "attribution_responder",
    "chat_turns",
    "default_responder",
]
FAULTS = ("429", "500", "hang", "malformed")
MAX_BODY_BYTES = 64 * 1024 * 1024
"""The largest request body read (a batch input file included); larger is a 413 unread."""


@dataclass
class Behaviour:
    latency_s: float = 0.0
    fail_rate: float = 0.0
    faults: tuple[str, ...] = FAULTS
    retry_after_s: float = 0.05
    hang_s: float = 3.0
    seed: int = 0
    responder: Responder = default_responder
    script: list[str] = field(default_factory=list)  # forced faults for the next calls, in order
    batch_polls: int = 1  # polls that see a batch `in_progress` before it completes
    native_tools: bool = True  # answer with tool_calls when tools are offered (False: text)
    seeded: bool = False  # call the responder with the request's seed too (a sampling model)
    user_agents: bool = True  # play a user's own agent (`user_agent`) on requests of no role
    slip_rate: float = 0.1  # the share of a user's agent's requests it slips on


class _Handler(BaseHTTPRequestHandler):
    server: TestServer  # type: ignore[assignment]
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # keep test output clean
        return

    def _send(
        self, status: int, body: bytes | dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        srv = self.server
        if self.path.rstrip("/").endswith("/models"):
            return self._send(200, {"object": "list", "data": [{"id": "mock", "object": "model"}]})
        match = re.search(r"/v1/batches/([\w-]+)$", self.path)
        if match and match.group(1) in srv.batches:
            return self._send(200, srv.poll_batch(match.group(1)))
        match = re.search(r"/v1/files/([\w-]+)/content$", self.path)
        if match and match.group(1) in srv.files:
            data = srv.files[match.group(1)]
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return None
        return self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        declared = self.headers.get("Content-Length") or "0"
        if not declared.isdigit() or int(declared) > MAX_BODY_BYTES:
            self.close_connection = True  # the body is not read: the connection is done
            status = 413 if declared.isdigit() else 400
            why = f"Content-Length {declared[:40]!r} is not a size up to {MAX_BODY_BYTES}"
            return self._send(status, {"error": {"message": why}})
        raw = self.rfile.read(int(declared))
        srv = self.server
        if self.path.endswith("/v1/files"):
            return self._send(200, srv.add_file(self.headers.get("Content-Type", ""), raw))
        try:
            body = json.loads(raw or b"{}")
        except (ValueError, RecursionError):
            body = None
        if not isinstance(body, dict):
            return self._send(400, {"error": {"message": "the body must be a JSON object"}})
        if self.path.endswith("/v1/batches"):
            srv.count(self.path, None, body)
            return self._send(200, srv.create_batch(body, self))
        authorized = bool(self.headers.get("Authorization") or self.headers.get("x-goog-api-key"))
        fault = srv.next_fault()
        srv.count(self.path, fault, body)
        time.sleep(srv.behaviour.latency_s)
        if not authorized:
            return self._send(401, {"error": {"message": "missing credentials"}})
        if fault == "429":
            return self._send(
                429,
                {"error": {"message": "rate limited", "code": 429}},
                {"Retry-After": str(srv.behaviour.retry_after_s)},
            )
        if fault == "500":
            return self._send(500, {"error": {"message": "internal error", "code": 500}})
        if fault == "hang":
            time.sleep(srv.behaviour.hang_s)
        if fault == "malformed":
            return self._send(200, b'{"choices": [ {"broken"')
        try:
            if self.path.endswith("/v1/chat/completions"):
                return self._send(200, self._chat(body))
            if ":generateContent" in self.path:
                return self._send(200, self._gemini(body))
        except Exception as exc:  # a responder that cannot answer is a server error
            return self._send(500, {"error": {"message": f"responder failed: {exc!r}"}})
        return self._send(404, {"error": {"message": f"no route {self.path}"}})

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._chat(body)

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = flatten(chat_turns(body.get("messages", [])))
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
        behaviour = self.server.behaviour
        if (behaviour.user_agents and behaviour.responder is default_responder
                and user_agent.applies(prompt, schema) and not has_role(prompt)):  # fmt: skip
            text = user_agent.answer_text(body, behaviour.slip_rate, behaviour.seed)
        elif behaviour.seeded:
            text = behaviour.responder(prompt, schema, body.get("seed"))  # type: ignore[call-arg]
        else:
            text = behaviour.responder(prompt, schema)
        n_in, n_out = max(1, len(prompt) // 4), max(1, len(text) // 4)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        finish = "stop"
        call = ACTION_LINE.search(text) if body.get("tools") else None
        if call and self.server.behaviour.native_tools:
            message = {
                "role": "assistant",
                "content": text[: call.start()].strip(),
                "tool_calls": [
                    {
                        "id": "call_0",
                        "type": "function",
                        "function": {"name": call.group(1), "arguments": call.group(2)},
                    }
                ],
            }
            finish = "tool_calls"
            with self.server._lock:
                self.server.tool_call_replies += 1
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "mock"),
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {
                "prompt_tokens": n_in,
                "completion_tokens": n_out,
                "total_tokens": n_in + n_out,
                "prompt_tokens_details": {"cached_tokens": 0},
            },
        }

    def _gemini(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = [p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", [])]
        system = body.get("systemInstruction") or body.get("system_instruction") or {}
        texts = [p.get("text", "") for p in system.get("parts", [])] + texts
        prompt = "\n".join(texts)
        config = body.get("generationConfig") or body.get("generation_config") or {}
        schema = config.get("responseJsonSchema") or config.get("response_json_schema")
        text = self.server.behaviour.responder(prompt, schema)
        n_in, n_out = max(1, len(prompt) // 4), max(1, len(text) // 4)
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": text}]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": n_in,
                "candidatesTokenCount": n_out,
                "totalTokenCount": n_in + n_out,
            },
        }


class TestServer(ThreadingHTTPServer):
    """Start with `start()`; `url` is the OpenAI base URL, `gemini_url` the Gemini one."""

    daemon_threads = True
    request_queue_size = 256  # the default (5) refuses connections under concurrency
    __test__ = False  # not a pytest class

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that timed out and hung up is expected here, not an error to print."""
        return

    def __init__(self, behaviour: Behaviour | None = None, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.behaviour = behaviour or Behaviour()
        self._rng = random.Random(self.behaviour.seed)
        self._lock = threading.Lock()
        self.requests: list[tuple[str, str | None]] = []
        self.bodies: list[dict[str, Any]] = []  # request bodies (headers are never kept)
        self.files: dict[str, bytes] = {}
        self.tool_call_replies = 0
        self.batches: dict[str, dict[str, Any]] = {}
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    @property
    def gemini_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def next_fault(self) -> str | None:
        with self._lock:
            if self.behaviour.script:
                fault = self.behaviour.script.pop(0)
                return None if fault == "ok" else fault
            if self._rng.random() < self.behaviour.fail_rate:
                return self._rng.choice(self.behaviour.faults)
            return None

    def count(self, path: str, fault: str | None, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append((path, fault))
            self.bodies.append(body)

    def add_file(self, content_type: str, raw: bytes) -> dict[str, Any]:
        """Store an uploaded multipart file (the Batch API's input JSONL)."""
        message = BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw
        )
        data = b""
        for part in message.iter_parts():
            if part.get_param("name", header="content-disposition") == "file":
                data = part.get_payload(decode=True) or b""
        with self._lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = data
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": 0,
            "filename": "batch.jsonl",
            "purpose": "batch",
            "status": "processed",
        }

    def create_batch(self, body: dict[str, Any], handler: _Handler) -> dict[str, Any]:
        """Answer every line now; report `in_progress` for `batch_polls` polls first."""
        lines = self.files[body["input_file_id"]].decode().splitlines()
        out = []
        for line in filter(None, lines):
            item = json.loads(line)
            out.append(
                json.dumps(
                    {
                        "id": f"resp-{len(out)}",
                        "custom_id": item["custom_id"],
                        "response": {
                            "status_code": 200,
                            "request_id": "r",
                            "body": handler.chat(item["body"]),
                        },
                        "error": None,
                    }
                )
            )
        with self._lock:
            batch_id = f"batch-{len(self.batches) + 1}"
            out_id = f"file-out-{batch_id}"
            self.files[out_id] = ("\n".join(out) + "\n").encode()
            self.batches[batch_id] = {
                "id": batch_id,
                "object": "batch",
                "endpoint": body["endpoint"],
                "input_file_id": body["input_file_id"],
                "completion_window": "24h",
                "created_at": 0,
                "status": "in_progress",
                "output_file_id": None,
                "request_counts": {"total": len(out), "completed": 0, "failed": 0},
                "_polls_left": self.behaviour.batch_polls,
                "_output": out_id,
            }
            return self._public(self.batches[batch_id])

    def poll_batch(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self.batches[batch_id]
            if batch["_polls_left"] > 0:
                batch["_polls_left"] -= 1
            else:
                batch.update(status="completed", output_file_id=batch["_output"])
                batch["request_counts"]["completed"] = batch["request_counts"]["total"]
            return self._public(batch)

    @staticmethod
    def _public(batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if not k.startswith("_")}

    @property
    def completed(self) -> int:
        """Requests answered normally (no fault injected)."""
        return sum(1 for _, fault in self.requests if fault is None)

    def start(self) -> TestServer:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def __enter__(self) -> TestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per call")
    parser.add_argument("--fail-rate", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--slip-rate",
        type=float,
        default=Behaviour.slip_rate,
        help="share of a user's own agent's requests the generic policy slips on",
    )
    args = parser.parse_args(argv)
    server = TestServer(
        Behaviour(args.latency, args.fail_rate, seed=args.seed, slip_rate=args.slip_rate),
        args.port,
    )
    print(f"test server on {server.url} (Gemini base {server.gemini_url})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.server_close()


if __name__ == "__main__":
    main()
