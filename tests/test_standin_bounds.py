"""The documented test server (`python -m whowhen.standin.server`) bounds what it reads:
a bad or huge Content-Length and a body that is not a JSON object get an answer, never a
dropped connection or a read of gigabytes."""

from __future__ import annotations

import socket

import pytest

from whowhen.standin.server import TestServer


def _first_line(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(request)
        return conn.recv(200).split(b"\r\n")[0]


@pytest.mark.parametrize(
    ("length", "status"), [(b"abc", b"400"), (b"-5", b"400"), (b"99999999999", b"413")]
)
def test_a_bad_content_length_is_answered(length: bytes, status: bytes) -> None:
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + length
    with TestServer() as srv:
        line = _first_line(srv.server_address[1], head + b"\r\n\r\n")
    assert line.startswith(b"HTTP/1.1 " + status)


@pytest.mark.parametrize("body", [b"[1,2]", b"null", b"42", b"{bad"])
def test_a_body_that_is_not_an_object_is_a_400(body: bytes) -> None:
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body)
    )
    with TestServer() as srv:
        line = _first_line(srv.server_address[1], head + body)
        assert srv.requests == []  # nothing was answered as a model call
    assert line.startswith(b"HTTP/1.1 400")
