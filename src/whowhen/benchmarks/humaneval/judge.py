"""The HumanEval judge that runs inside the sandbox (standard library only).

Two processes, so that a candidate cannot forge a pass:

- `judge` (trusted) reads a one-time token from stdin and closes it, makes itself
  undumpable, starts the candidate process, then runs the problem's prompt (for the
  helpers a test may use, e.g. `encode_cyclic`) and hidden test in its OWN namespace and
  calls `check` with a proxy. It prints `PASS <token>` only after `check` returns.
- `candidate` runs the candidate's program and answers the proxy's calls over a pipe,
  with its stdout and stderr on /dev/null. It never holds the sandbox's stdout, the
  token or the judge's memory: exiting early, `sys.exit(0)`, patching `check` or
  printing `PASS` cannot make the judge print the token.

Values cross the pipe as tagged JSON (lists, tuples, dicts, sets, bytes, numbers,
strings, None); anything else arrives as an opaque value equal to nothing.
"""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys


class Opaque:
    """A value the candidate returned that has no plain-data form."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]


def enc(v: object) -> object:
    if v is None or type(v) in (bool, int, float, str):
        return v
    if type(v) is list:
        return [enc(x) for x in v]
    for kind in (tuple, set, frozenset):
        if type(v) is kind:
            return {kind.__name__: [enc(x) for x in v]}  # type: ignore[attr-defined]
    if type(v) is dict:
        return {"dict": [[enc(k), enc(x)] for k, x in v.items()]}
    if type(v) is bytes:
        return {"bytes": v.hex()}
    return {"opaque": type(v).__name__}


def dec(v: object) -> object:
    if isinstance(v, list):
        return [dec(x) for x in v]
    if not isinstance(v, dict):
        return v
    ((kind, body),) = v.items()
    if kind == "dict":
        return {dec(k): dec(x) for k, x in body}
    if kind == "bytes":
        return bytes.fromhex(body)
    if kind in ("tuple", "set", "frozenset"):
        return getattr(builtins, kind)(dec(x) for x in body)
    return Opaque(str(body))


def _undumpable() -> None:
    try:
        import ctypes  # deferred: the sandbox may lack libffi

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    except (OSError, ImportError, AttributeError):
        pass


def _raise(name: str, message: str) -> None:
    kind = getattr(builtins, name, None)
    if isinstance(kind, type) and issubclass(kind, Exception):
        raise kind(message)
    raise RuntimeError(f"{name}: {message}")


def judge(problem_path: str, candidate_path: str) -> int:
    token = sys.stdin.readline().strip()
    os.close(0)
    _undumpable()
    with open(problem_path, encoding="utf-8") as fh:
        problem = json.load(fh)
    child = subprocess.Popen(
        [sys.executable, "-I", "-S", __file__, "candidate", candidate_path, problem["entry"]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        close_fds=True,
    )
    assert child.stdin is not None and child.stdout is not None
    send, receive = child.stdin, child.stdout

    def candidate(*args: object, **kwargs: object) -> object:
        send.write((json.dumps({"args": enc(list(args)), "kwargs": enc(kwargs)}) + "\n").encode())
        send.flush()
        line = receive.readline(1 << 24)
        if not line:
            raise RuntimeError("the candidate's process ended before answering")
        reply = json.loads(line)
        if "raise" in reply:
            _raise(*reply["raise"])
        return dec(reply["ok"])

    scope: dict = {"__name__": "__judge__"}
    exec(compile(problem["prompt"], "prompt.py", "exec"), scope)
    scope[problem["entry"]] = candidate  # a test may call the entry point by name
    exec(compile(problem["test"], "test.py", "exec"), scope)
    check = scope["check"]
    check(candidate)
    os.write(1, f"PASS {token}\n".encode())
    return 0


def serve(candidate_path: str, entry: str) -> int:
    """The candidate's side: run its program, then answer calls until the judge hangs up."""
    reply = os.fdopen(os.dup(1), "wb")
    requests = sys.stdin.buffer
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    with open(candidate_path, encoding="utf-8", errors="replace") as fh:
        source = fh.read()
    scope: dict = {"__name__": "__main__"}
    exec(compile(source, "candidate.py", "exec"), scope)
    function = scope[entry]
    for line in requests:
        call = json.loads(line)
        try:
            value = function(*dec(call["args"]), **dec(call["kwargs"]))  # type: ignore[arg-type]
            out = {"ok": enc(value)}
        except Exception as exc:  # the candidate's error, reported to the test
            out = {"raise": [type(exc).__name__, str(exc)[:500]]}
        reply.write((json.dumps(out) + "\n").encode())
        reply.flush()
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "judge":
        sys.exit(judge(sys.argv[2], sys.argv[3]))
    sys.exit(serve(sys.argv[2], sys.argv[3]))
