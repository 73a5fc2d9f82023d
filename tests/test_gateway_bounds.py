"""The model gateway under attack, over raw sockets (some of these requests are not valid
HTTP, so no HTTP client would send them): every bad request gets one answer, a 4xx with
one JSON line, fast, before any model call; a body past the cap is refused before it is
read; and the gateway goes on answering good calls afterwards."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from whowhen.gateway.server import Gateway
from whowhen.gateway.session import Answer, Session

GOOD = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()


class Counting:
    """A forward that answers `ok` and counts the model calls (each would be paid)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: dict[str, Any], agent: str) -> Answer:
        self.calls += 1
        return Answer("ok", ())


@pytest.fixture
def gateway() -> Iterator[tuple[Gateway, Counting, list[str]]]:
    """A gateway that makes a session for any run id first seen (as `whowhen gateway`
    does), counting the sessions it made and the model calls."""
    forward, made = Counting(), []

    def factory(run_id: str) -> Session:
        made.append(run_id)
        return Session(run_id, forward)

    with Gateway(factory=factory) as gw:
        yield gw, forward, made


def _port(gw: Gateway) -> int:
    return int(gw.base_url("r", "a").split(":")[2].split("/")[0])


def exchange(port: int, data: bytes, wait_s: float = 5.0) -> tuple[int | None, bytes]:
    """Send `data` as it is; (status, body) of the answer, or (None, why) when none came:
    the connection closed with nothing, or nothing within `wait_s`."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait_s) as sock:
        with contextlib.suppress(OSError):  # a server may stop reading a refused body
            sock.sendall(data)
        got = b""
        try:
            while b"\r\n\r\n" not in got:
                chunk = sock.recv(65536)
                if not chunk:
                    return None, b"closed without an answer"
                got += chunk
            head, body = got.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            length = next(
                (int(x.split(":", 1)[1]) for x in lines if x.lower().startswith("content-length")),
                0,
            )
            while len(body) < length:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                body += chunk
        except TimeoutError:
            return None, f"no answer within {wait_s} s".encode()
        except ConnectionResetError:
            return None, b"connection reset"
    return int(lines[0].split()[1]), body


def post(path: str, body: bytes, length: str | None = None, headers: tuple[str, ...] = ()) -> bytes:
    head = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    if length is not None or not any(h.lower().startswith("transfer-encoding") for h in headers):
        head.append(f"Content-Length: {len(body) if length is None else length}")
    return ("\r\n".join([*head, *headers]) + "\r\n\r\n").encode() + body


CHAT = "/run/r1/solver/v1/chat/completions"


def _error(body: bytes) -> str:
    """The one error line of an answer (a JSON error object)."""
    message = json.loads(body)["error"]["message"]
    assert "\n" not in message and "Traceback" not in message
    return message


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (b"[1, 2]", "a list"),
        (b"null", "null"),
        (b"42", "a number"),
        (b'"hi"', "a string"),
        (b"{bad", "not JSON"),
        (b"[" * 100_000, "not JSON"),  # nested past the parser's recursion limit
        (b"\xff\xfe{}", "not JSON"),
    ],
)
def test_a_body_that_is_not_a_json_object_is_a_400(gateway, body: bytes, named: str) -> None:
    gw, forward, _ = gateway
    status, answer = exchange(_port(gw), post(CHAT, body))
    assert status == 400, answer
    assert named in _error(answer)
    assert forward.calls == 0


@pytest.mark.parametrize(
    ("length", "status"), [("abc", 400), ("-5", 400), ("99999999999999", 413), ("1e3", 400)]
)
def test_a_bad_content_length_is_answered_at_once(gateway, length: str, status: int) -> None:
    gw, forward, _ = gateway
    start = time.monotonic()
    got, answer = exchange(_port(gw), post(CHAT, GOOD, length=length))
    assert got == status, answer
    assert time.monotonic() - start < 3 and forward.calls == 0


def test_a_body_past_the_cap_is_refused_before_it_is_read(gateway) -> None:
    """50 MB declared, 1 MB sent: the 413 comes without waiting for the rest (the old
    server read the whole body into memory first). A chunked body without a length is
    counted as it arrives and refused past the cap too."""
    gw, forward, _ = gateway
    port = _port(gw)
    start = time.monotonic()
    status, answer = exchange(port, post(CHAT, b"x" * 1_000_000, length=str(50_000_000)))
    assert status == 413, answer
    assert "8 MiB" in _error(answer) and time.monotonic() - start < 3

    chunk = b"y" * 1_000_000
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(10))
    status, answer = exchange(
        port, post(CHAT, chunked + b"0\r\n\r\n", headers=("Transfer-Encoding: chunked",))
    )
    assert status == 413, answer
    assert forward.calls == 0
    # and the gateway still answers a good call
    status, answer = exchange(port, post(CHAT, GOOD))
    assert status == 200 and json.loads(answer)["choices"][0]["message"]["content"] == "ok"
    assert forward.calls == 1


@pytest.mark.parametrize(
    "run",
    ["a" * 300, "..", ".hidden", "a%20b", "a%00b", "%2E%2E", "r%C3%A9sum%C3%A9"],
)
def test_a_bad_run_id_is_refused_before_any_model_call(gateway, run: str) -> None:
    """A run id becomes a session and, with `whowhen gateway`, a file name: a long one or
    one with other characters than letters, digits, '.', '_' and '-' (or starting with
    a dot) is a 400 before a session is made or the model is asked."""
    gw, forward, made = gateway
    status, answer = exchange(_port(gw), post(f"/run/{run}/solver/v1/chat/completions", GOOD))
    assert status == 400, answer
    assert "run id" in _error(answer)
    assert forward.calls == 0 and made == []
    status, answer = exchange(_port(gw), f"GET /run/{run}/solver/v1/models HTTP/1.1\r\n"
                              "Host: x\r\n\r\n".encode())  # fmt: skip
    assert status == 400 and made == []


def test_an_encoded_slash_in_a_run_id_is_no_route(gateway) -> None:
    gw, forward, made = gateway
    status, answer = exchange(_port(gw), post("/run/..%2F..%2Fx/solver/v1/chat/completions", GOOD))
    assert status in (400, 404), answer
    assert forward.calls == 0 and made == []


@pytest.mark.parametrize("agent", ["b" * 300, "a%20b", "%2E%2E"])
def test_a_bad_agent_name_is_refused_before_any_model_call(gateway, agent: str) -> None:
    gw, forward, made = gateway
    status, answer = exchange(_port(gw), post(f"/run/r1/{agent}/v1/chat/completions", GOOD))
    assert status == 400, answer
    assert "agent" in _error(answer) and forward.calls == 0 and made == []


def test_a_failure_of_the_gateway_itself_is_one_line_and_it_goes_on() -> None:
    """A recording listener that fails (a full disk) is a 500 with one error line naming
    the run and agent, not a dropped connection; the next call is answered."""
    fail = [True]

    def record(exchange: Any) -> None:
        if fail.pop(0) if fail else False:
            raise OSError("No space left on device")

    with Gateway() as gw:
        gw.open(Session("r1", Counting(), listener=record))
        status, answer = exchange(_port(gw), post(CHAT, GOOD))
        assert status == 500, answer
        assert _error(answer) == "run r1, agent solver: OSError: No space left on device"
        status, answer = exchange(_port(gw), post(CHAT, GOOD))
        assert status == 200, answer


def test_sessions_with_ids_no_url_can_reach_are_refused() -> None:
    with Gateway() as gw:
        with pytest.raises(ValueError, match="run id"):
            gw.open(Session("x" * 300, Counting()))
        with pytest.raises(ValueError, match="agent"):
            gw.base_url("r", "a b")


def test_the_gateway_command_names_record_files_only_from_plain_ids(tmp_path: Path) -> None:
    from whowhen.gateway.recording import record_path

    assert record_path(tmp_path, "my-run-7") == tmp_path / "my-run-7.jsonl"
    for bad in ("../x", "a/b", "x" * 300, ".hidden", ""):
        with pytest.raises(ValueError):
            record_path(tmp_path, bad)
