"""The model gateway: an OpenAI-compatible endpoint between an agent framework and the
model, for one process's runs.

Each run gets its own sessions; each agent of a run its own base URL,

    http://127.0.0.1:<port>/run/<run id>/<agent>/v1

so the gateway knows who made every call without reading the framework's prompts.
`POST .../chat/completions` is answered by the run's `Session` (record, replay, inject);
`GET .../models` lists one placeholder model. The framework's API key is ignored: the
real key stays with the model client behind the gateway, so the framework (and any code
it runs) never holds it. A `stream: true` request gets the whole answer as one
server-sent chunk.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, unquote

from whowhen.gateway.exchange import completion
from whowhen.gateway.session import FidelityError, ForwardError, Session

MODEL = "whowhen-gateway"
"""The model name a framework is configured with; the gateway decides the real model."""


class _Handler(BaseHTTPRequestHandler):
    server: Gateway  # type: ignore[assignment]
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        return

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _route(self) -> tuple[Session, str, str] | None:
        """(session, agent, rest of the path) of `/run/<run>/<agent>/v1/<rest>`."""
        parts = self.path.split("?", 1)[0].strip("/").split("/")
        if len(parts) < 5 or parts[0] != "run" or parts[3] != "v1":
            return None
        session = self.server.session(unquote(parts[1]))
        return (session, unquote(parts[2]), "/".join(parts[4:])) if session else None

    def do_GET(self) -> None:
        route = self._route()
        if route and route[2] == "models":
            return self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        return self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        route = self._route()
        if route is None or route[2] != "chat/completions":
            return self._send(404, {"error": {"message": f"no run or route {self.path}"}})
        session, agent, _ = route
        try:
            body = json.loads(raw or b"{}")
            exchange, message = session.answer(agent, body)
        except FidelityError as exc:
            return self._send(409, {"error": {"message": f"prefix fidelity: {exc}",
                                              "type": "fidelity"}})  # fmt: skip
        except ForwardError as exc:
            return self._send(502, {"error": {"message": str(exc), "type": "model"}})
        except ValueError as exc:
            return self._send(400, {"error": {"message": f"not a JSON body: {exc}"}})
        answer = completion(message, exchange, session.run_id)
        if body.get("stream"):
            return self._stream(answer)
        return self._send(200, answer)

    def _stream(self, answer: dict[str, Any]) -> None:
        """The whole answer as one chunk, then [DONE] (for frameworks that only stream)."""
        choice = answer["choices"][0]
        message = dict(choice["message"])
        if "tool_calls" in message:
            message["tool_calls"] = [
                {**call, "index": k} for k, call in enumerate(message["tool_calls"])
            ]
        chunk = {**answer, "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": message,
                              "finish_reason": choice["finish_reason"]}]}  # fmt: skip
        data = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Gateway(ThreadingHTTPServer):
    """`with Gateway() as gw: url = gw.open(session, agent)`; one per process is enough."""

    daemon_threads = True
    request_queue_size = 64

    def __init__(self, port: int = 0, factory: Callable[[str], Session] | None = None) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.sessions: dict[str, Session] = {}
        self.factory = factory  # makes a session for a run id first seen (`whowhen gateway`)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def open(self, session: Session) -> None:
        """Answer `session.run_id`'s calls from now on."""
        self.sessions[session.run_id] = session

    def session(self, run_id: str) -> Session | None:
        """The run's session; with a factory, a new one for a run id first seen."""
        with self._lock:
            if run_id not in self.sessions and self.factory is not None:
                self.sessions[run_id] = self.factory(run_id)
            return self.sessions.get(run_id)

    def close_run(self, run_id: str) -> Session | None:
        return self.sessions.pop(run_id, None)

    def base_url(self, run_id: str, agent: str) -> str:
        """The OpenAI base URL that agent `agent` of run `run_id` is given."""
        port = self.server_address[1]
        return f"http://127.0.0.1:{port}/run/{quote(run_id, safe='')}/{quote(agent, safe='')}/v1"

    def __enter__(self) -> Gateway:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
