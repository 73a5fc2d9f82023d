"""The model gateway: an OpenAI-compatible endpoint between an agent framework and the
model, for one process's runs.

Each run gets its own sessions; each agent of a run its own base URL,

    http://127.0.0.1:<port>/run/<run id>/<agent>/v1

so the gateway knows who made every call without reading the framework's prompts. A
gateway made for one run (`default_run`, as `whowhen record` makes it) also answers at
`/v1` and `/agent/<agent>/v1`, and names the agents of `/v1` calls itself (`agents`).
`POST .../chat/completions` is answered by the run's `Session` (record, replay, inject);
`GET .../models` lists one placeholder model. The framework's API key is ignored: the
real key stays with the model client behind the gateway, so the framework (and any code
it runs) never holds it. A `stream: true` request gets the whole answer as one
server-sent chunk.

What a request may be is checked before anything else happens: a run id and an agent
name are 1-128 letters, digits, '.', '_' or '-' (not starting with '.'; a run id names a
recording file in `whowhen gateway`), a body is at most `MAX_BODY_BYTES` of UTF-8 JSON
holding an object. Anything else is a 4xx with one JSON error line, before a session is
made or the model is asked. HTTP itself (a bad Content-Length, chunked bodies) is
uvicorn's (`serve`); the app is a starlette one.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from whowhen.gateway.agents import AGENT_HEADER
from whowhen.gateway.exchange import completion
from whowhen.gateway.names import check_name
from whowhen.gateway.serve import BackgroundServer
from whowhen.gateway.session import FidelityError, ForwardError, Session

MODEL = "whowhen-gateway"
"""The model name a framework is configured with; the gateway decides the real model."""

MAX_BODY_BYTES = 8 * 1024 * 1024
"""The largest request body taken: a long run's whole conversation is well under it."""

log = logging.getLogger(__name__)


class RunTaken(ValueError):
    """A session factory's refusal of a run id (its recording exists already)."""


class _Refused(Exception):
    """A request answered with `status` and one error line, before any work."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request") -> None:
        super().__init__(message)
        self.status, self.kind = status, kind

    def response(self) -> Response:
        return _json(self.status, {"error": {"message": str(self), "type": self.kind}})


def _json(status: int, body: dict[str, Any]) -> Response:
    return Response(json.dumps(body).encode(), status, media_type="application/json")


def _names(request: Request, default_run: str | None) -> tuple[str, str | None]:
    """(run id, agent) of the request, each checked: from the URL, else the single run
    being recorded and the `X-Agent-Name` header (None: the session names the agent)."""
    params = request.path_params
    run, agent = params.get("run", default_run), params.get("agent")
    if agent is None:
        agent = request.headers.get(AGENT_HEADER) or None
    try:
        if run is None:
            raise _Refused(404, f"no run or route {request.url.path}", "not_found")
        return check_name("run id", run), agent and check_name("agent", agent)
    except ValueError as exc:
        raise _Refused(400, str(exc)) from None


async def _body(request: Request) -> dict[str, Any]:
    """The request's JSON object, read no further than `MAX_BODY_BYTES`."""
    cap = f"{MAX_BODY_BYTES // (1024 * 1024)} MiB"
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:  # uvicorn checked its form
        raise _Refused(413, f"a body of {declared} bytes is over the {cap} cap", "too_large")
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise _Refused(413, f"the body is over the {cap} cap", "too_large")
            chunks.append(chunk)
    except ClientDisconnect:
        raise _Refused(400, "the client went away before its body was read") from None
    try:
        body = json.loads(b"".join(chunks).decode("utf-8"))
    except UnicodeDecodeError:
        raise _Refused(400, "the body is not JSON: not UTF-8") from None
    except ValueError as exc:
        raise _Refused(400, f"the body is not JSON: {exc}") from None
    except RecursionError:
        raise _Refused(400, "the body is not JSON this gateway reads: nested too deeply") from None
    if not isinstance(body, dict):
        raise _Refused(400, f"the body must be a JSON object, not {_kind(body)}")
    return body


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    kinds = {list: "a list", str: "a string", int: "a number", float: "a number"}
    return kinds.get(type(value), type(value).__name__)


def _stream(answer: dict[str, Any]) -> Response:
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
    return Response(data, 200, headers={"Content-Type": "text/event-stream"})


class Gateway:
    """`with Gateway() as gw: gw.open(session); url = gw.base_url(run_id, agent)`; one
    per process is enough. The port is bound when it is made, served inside `with`."""

    def __init__(
        self,
        port: int = 0,
        factory: Callable[[str], Session] | None = None,
        default_run: str | None = None,
    ) -> None:
        self.sessions: dict[str, Session] = {}
        self.factory = factory  # makes a session for a run id first seen (`whowhen gateway`)
        self.default_run = default_run  # the run of `/v1` and `/agent/<name>/v1` (record)
        self._lock = threading.Lock()
        routes = []
        for prefix in ("/run/{run}/{agent}/v1", "/agent/{agent}/v1", "/v1"):
            routes += [
                Route(f"{prefix}/chat/completions", self._chat, methods=["POST"]),
                Route(f"{prefix}/models", self._models, methods=["GET"]),
            ]
        app = Starlette(
            routes=routes,
            exception_handlers={HTTPException: self._no_route},
        )
        self._server = BackgroundServer(app, port)

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def server_address(self) -> tuple[str, int]:
        return ("127.0.0.1", self._server.port)

    def open(self, session: Session) -> None:
        """Answer `session.run_id`'s calls from now on."""
        check_name("run id", session.run_id)
        with self._lock:
            self.sessions[session.run_id] = session

    def session(self, run_id: str) -> Session | None:
        """The run's session; with a factory, a new one for a run id first seen."""
        with self._lock:
            if run_id not in self.sessions and self.factory is not None:
                self.sessions[run_id] = self.factory(check_name("run id", run_id))
            return self.sessions.get(run_id)

    def close_run(self, run_id: str) -> Session | None:
        with self._lock:
            return self.sessions.pop(run_id, None)

    def base_url(self, run_id: str, agent: str) -> str:
        """The OpenAI base URL that agent `agent` of run `run_id` is given."""
        run, name = quote(check_name("run id", run_id)), quote(check_name("agent", agent))
        return f"http://127.0.0.1:{self.port}/run/{run}/{name}/v1"

    def serve_forever(self) -> None:
        """Serve from this thread (`__enter__` serves from a background one)."""
        self._server.serve_forever()

    def __enter__(self) -> Gateway:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    async def _no_route(self, request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        what = "no route" if request.method == "GET" else "no run or route"
        return _json(status, {"error": {"message": f"{what} {request.url.path}"}})

    async def _models(self, request: Request) -> Response:
        try:
            run, _ = _names(request, self.default_run)
        except _Refused as exc:
            return exc.response()
        if await run_in_threadpool(self.session, run) is None:
            return _json(404, {"error": {"message": f"no route {request.url.path}"}})
        return _json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    async def _chat(self, request: Request) -> Response:
        try:
            run, agent = _names(request, self.default_run)
            body = await _body(request)
        except _Refused as exc:
            return exc.response()
        try:
            session = await run_in_threadpool(self.session, run)
        except RunTaken as exc:
            return _Refused(409, str(exc), "run_taken").response()
        if session is None:
            return _json(404, {"error": {"message": f"no run or route {request.url.path}"}})
        try:
            exchange, message = await run_in_threadpool(session.answer, agent, body)
        except FidelityError as exc:
            return _json(409, {"error": {"message": f"prefix fidelity: {exc}",
                                         "type": "fidelity"}})  # fmt: skip
        except ForwardError as exc:
            return _json(502, {"error": {"message": str(exc), "type": "model"}})
        except RecursionError:
            return _Refused(400, "the body is nested too deeply to compare or forward").response()
        except Exception as exc:  # the gateway's own failure: one line, the server goes on
            line = f"run {run}, agent {agent or '?'}: {type(exc).__name__}: {str(exc)[:300]}"
            log.warning("gateway: %s", line)
            return _json(500, {"error": {"message": line, "type": "gateway"}})
        answer = completion(message, exchange, session.run_id)
        return _stream(answer) if body.get("stream") else _json(200, answer)
