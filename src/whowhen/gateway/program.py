"""Run a user's program behind a one-run gateway and say how it ended.

The program is any command. It reaches the gateway through the variables OpenAI-client
code reads (`OPENAI_BASE_URL`; `OPENAI_API_BASE` for LangChain and LiteLLM), with a
placeholder `OPENAI_API_KEY`: the real key stays with the gateway's model client. Its
stdout passes through and is kept (the judge reads it); its stderr passes through.

How it ended is one of: `success` / `failure` (its exit status, or the judge's: 0 is
success), or, when nothing can be said about the agents, `interrupted` (SIGINT or
SIGTERM reached the recorder), `timeout` (`timeout_s` passed), `killed` (a signal the
recorder did not send ended it), `model error` (the model behind the gateway failed a
call: an outage is not the agent's failure), `diverged` (a replayed program asked what
its recording did not) or `no start` (the command or the judge could not be started).
Only the first two are outcomes of the agents.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from whowhen.gateway.server import Gateway
from whowhen.gateway.session import Session

KEY_PLACEHOLDER = "whowhen-gateway"
MAX_STDOUT_BYTES = 16 * 1024 * 1024
"""The program's stdout kept for the judge (all of it still passes through)."""
AGENT_OUTCOMES = ("success", "failure")


class Interrupted(Exception):
    """SIGINT or SIGTERM reached the recorder while the program ran."""


@dataclass(frozen=True)
class Ended:
    """How one run of the program ended (see the module)."""

    outcome: str
    reason: str
    exit_status: int | None = None
    judge_status: int | None = None
    stdout: str = ""

    @property
    def success(self) -> bool | None:
        return self.outcome == "success" if self.outcome in AGENT_OUTCOMES else None


def program_env(base_url: str, run_id: str) -> dict[str, str]:
    """The program's environment: this one, its OpenAI settings pointing at the gateway."""
    env = dict(os.environ)
    env.update(
        OPENAI_BASE_URL=base_url,
        OPENAI_API_BASE=base_url,
        OPENAI_API_KEY=KEY_PLACEHOLDER,
        WHOWHEN_RUN_ID=run_id,
    )
    return env


@contextmanager
def stop_signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise `Interrupted` in the main thread while inside."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: Any) -> None:
        raise Interrupted(signal.Signals(signum).name)

    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def run_behind(
    session: Session,
    command: Sequence[str],
    *,
    judge: str | None = None,
    timeout_s: float | None = None,
    echo: bool = True,
) -> Ended:
    """Serve `session` on a one-run gateway, run `command` against it, and judge it."""
    with Gateway(default_run=session.run_id) as gateway:
        gateway.open(session)
        base_url = f"http://127.0.0.1:{gateway.port}/v1"
        ended = _run(command, program_env(base_url, session.run_id), timeout_s, echo)
    if ended.outcome == "finished":
        ended = _judge(ended, judge) if judge else _by_status(ended)
    if session.model_errors and ended.outcome in AGENT_OUTCOMES:
        first = session.model_errors[0]
        return Ended(
            "model error",
            f"the model failed {len(session.model_errors)} call(s), first {first}",
            ended.exit_status,
            ended.judge_status,
            ended.stdout,
        )
    if session.failure and ended.outcome in AGENT_OUTCOMES:
        return Ended(
            "diverged",
            f"the program left the recording: {session.failure}",
            ended.exit_status,
            ended.judge_status,
            ended.stdout,
        )
    return ended


def _by_status(ended: Ended) -> Ended:
    status = ended.exit_status
    outcome = "success" if status == 0 else "failure"
    return Ended(outcome, f"exit status {status}", status, None, ended.stdout)


def _judge(ended: Ended, judge: str) -> Ended:
    """`judge` (a shell command) reads the program's stdout; its exit status decides."""
    try:
        proc = subprocess.run(
            judge,
            shell=True,
            input=ended.stdout.encode(),
            stdout=sys.stderr,
            timeout=600,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Ended(
            "no start", f"the judge {judge!r} failed: {exc}", ended.exit_status, None, ended.stdout
        )
    outcome = "success" if proc.returncode == 0 else "failure"
    reason = f"judge exit status {proc.returncode} (program exit status {ended.exit_status})"
    return Ended(outcome, reason, ended.exit_status, proc.returncode, ended.stdout)


def _run(command: Sequence[str], env: dict[str, str], timeout_s: float | None, echo: bool) -> Ended:
    try:
        proc = subprocess.Popen(
            list(command), env=env, stdout=subprocess.PIPE, start_new_session=True
        )
    except OSError as exc:
        return Ended("no start", f"cannot start {command[0]!r}: {exc.strerror or exc}")
    kept: list[bytes] = []
    reader = threading.Thread(target=_pump, args=(proc, kept, echo), daemon=True)
    reader.start()
    try:
        with stop_signals():
            status = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _stop(proc)
        reader.join(5)
        return Ended(
            "timeout", f"still running after {timeout_s:g} s: stopped", None, None, _text(kept)
        )
    except (Interrupted, KeyboardInterrupt) as exc:
        _stop(proc)
        reader.join(5)
        name = str(exc) or "SIGINT"
        return Ended(
            "interrupted", f"{name} received: the program was stopped", None, None, _text(kept)
        )
    reader.join(30)
    if status < 0:
        name = signal.Signals(-status).name if -status in signal.valid_signals() else -status
        return Ended("killed", f"the program was killed by {name}", status, None, _text(kept))
    return Ended("finished", "", status, None, _text(kept))


def _pump(proc: subprocess.Popen[bytes], kept: list[bytes], echo: bool) -> None:
    assert proc.stdout is not None
    size = 0
    for chunk in iter(lambda: proc.stdout.read1(65536), b""):  # type: ignore[union-attr]
        if echo:
            sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
        if size < MAX_STDOUT_BYTES:
            kept.append(chunk[: MAX_STDOUT_BYTES - size])
            size += len(kept[-1])


def _text(kept: list[bytes]) -> str:
    return b"".join(kept).decode("utf-8", errors="replace")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the program's process group, SIGKILL after 5 s."""
    for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue
