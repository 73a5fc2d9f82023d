"""An ASGI app served by uvicorn on 127.0.0.1, from a background thread (or this one).

Why uvicorn: a maintained server parses HTTP (a bad Content-Length, a chunked body, an
oversized header are its business, each answered at once), where a hand-written
handler meets every malformed request with a traceback and a dropped connection. The
socket is bound when the server is made, so its port is known before it serves.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn


class BackgroundServer:
    """`app` on 127.0.0.1:`port` (0: any free port): `start()` serves it from a daemon
    thread, `stop()` ends it; `serve_forever()` serves from the calling thread."""

    def __init__(self, app: Any, port: int = 0, *, graceful_s: float = 2.0) -> None:
        self.socket = socket.create_server(("127.0.0.1", port), backlog=128)
        self.port: int = self.socket.getsockname()[1]
        config = uvicorn.Config(
            app,
            http="h11",  # one HTTP parser everywhere, whatever else is installed
            ws="none",
            lifespan="off",
            log_config=None,  # the process's logging, untouched
            log_level="warning",
            access_log=False,
            proxy_headers=False,
            server_header=False,
            date_header=False,
            timeout_keep_alive=300,  # a framework waits on tools between calls
            timeout_graceful_shutdown=graceful_s,
        )
        self._server = uvicorn.Server(config)
        self._graceful_s = graceful_s
        self._thread: threading.Thread | None = None

    def serve_forever(self) -> None:
        """Serve from this thread until `stop()` (in the main thread: until Ctrl-C)."""
        self._server.run(sockets=[self.socket])

    def start(self) -> None:
        """Serve from a daemon thread; return once it accepts connections."""
        self._thread = threading.Thread(
            target=self.serve_forever, name=f"http-127.0.0.1:{self.port}", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the HTTP server on port {self.port} did not start")
            time.sleep(0.005)

    def stop(self) -> None:
        """Stop serving: calls in flight get `graceful_s` to finish, then the socket closes."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(self._graceful_s + 5)
            self._thread = None
        self.socket.close()
