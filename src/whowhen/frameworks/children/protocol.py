"""The child's half of the line protocol with the parent (`whowhen.frameworks.child`).

One JSON object per line. The parent writes the run's task first; the child asks for
every tool call (`{"tool": name, "args": {...}}`) and gets `{"result": text, "done":
bool}` or `{"error": text}` back; it ends with `{"end": true}` or, when the framework
raised, `{"error": {"type", "message", "kinds", "body"}}`. The framework's own prints
must not reach the channel: fd 1 is pointed at stderr and the channel keeps a private
copy of the real stdout.

Standard library only: this runs in the framework's interpreter, without whowhen.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

MAX_LINE = 8 * 1024 * 1024
"""The longest line either side accepts (a tool's page or a task with its media)."""


class Parent:
    """The channel to the parent process."""

    def __init__(self) -> None:
        self._out = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)  # the framework's prints go to stderr
        sys.stdout = sys.stderr
        self._in = sys.stdin
        self.done = False

    def _send(self, obj: dict[str, Any]) -> None:
        self._out.write(json.dumps(obj) + "\n")
        self._out.flush()

    def _receive(self) -> dict[str, Any]:
        line = self._in.readline(MAX_LINE + 1)
        if not line or len(line) > MAX_LINE:
            raise RuntimeError("the parent closed the channel or sent an overlong line")
        value = json.loads(line)
        if not isinstance(value, dict):
            raise RuntimeError("the parent sent a line that is not a JSON object")
        return value

    def task(self) -> dict[str, Any]:
        return self._receive()

    def call_tool(self, name: str, args: dict[str, Any]) -> str:
        """Run a tool in the parent's environment; its observation text."""
        self._send({"tool": name, "args": args})
        reply = self._receive()
        self.done = bool(reply.get("done"))
        if "error" in reply:
            raise RuntimeError(str(reply["error"]))
        return str(reply.get("result", ""))

    def end(self) -> None:
        self._send({"end": True})

    def fail(self, exc: BaseException) -> None:
        """Report the framework's exception with the class names of its causes (the parent
        tells an unreachable gateway from the agents' own error by them)."""
        kinds, body, cur, seen = [], None, exc, set()
        while cur is not None and id(cur) not in seen:
            seen.add(id(cur))
            kinds.append(type(cur).__name__)
            found = getattr(cur, "body", None)
            body = body if body is not None or not isinstance(found, dict) else found
            cur = cur.__cause__ or cur.__context__
        message = f"{type(exc).__name__}: {exc}"[:2000]
        self._send({"error": {"type": type(exc).__name__, "message": message,
                              "kinds": kinds, "body": body}})  # fmt: skip
