"""What a framework adapter is, and how one framework run is driven through the gateway.

An adapter builds a real framework's agents for a built-in benchmark, with the
benchmark's tools as the framework's native tools (calling the same deterministic
environment), points every agent's model at its own gateway URL, and runs one task. It
plays a built-in system (`plays`): the same agent names and role prompts, so the
built-in system's error operators apply to its steps and the stand-in model can play
its roles. The run's steps come from the `Recorder`; its model calls from the gateway's
`Session`, which also replays them for a warm start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from whowhen.errors import InfraError, infra_reason
from whowhen.frameworks.record import Recorder, native_message, tool_call_actions
from whowhen.gateway.session import Answer, FidelityError, Forward, ForwardError, Plan, Session
from whowhen.runtime import Action, Environment, Episode, Step

if TYPE_CHECKING:
    from whowhen.gateway.server import Gateway


@dataclass(frozen=True)
class FrameworkTask:
    """What an adapter gets for one run."""

    text: str  # the task as the environment states it (step 0)
    tools: tuple[dict[str, Any], ...]  # the benchmark's tool specs: name, description, parameters
    prompts: dict[str, str]  # agent -> the role prompt of the built-in system it plays
    base_url: Callable[[str], str]  # agent -> its model's base URL (the gateway)
    call_tool: Callable[[str, dict[str, Any]], str]  # run a tool; its observation is a step
    done: Callable[[], bool]  # the environment has its final answer
    max_turns: int  # model calls the framework may make
    history: Callable[[], list[Step]]  # the run's steps so far (for turn-taking rules)


class Adapter(Protocol):
    system: str  # the config's system name, e.g. smolagents_react
    plays: str  # the built-in system whose agents, prompts and operators it takes
    agents: tuple[str, ...]
    volatile: tuple[str, ...]  # request fields that differ between identical runs

    def run(self, task: FrameworkTask) -> None:
        """Run the framework on one task to its end (or an exception)."""

    def read(self, agent: str, message: dict[str, Any]) -> list[Action]:
        """The actions an answer of `agent` holds, in the framework's format."""

    def write(self, actions: list[Action], message: dict[str, Any]) -> dict[str, Any]:
        """`message` (a recorded answer) rewritten to hold `actions` instead: an injection
        (the answer's steps before the injected one, then the injected action)."""


class NativeToolCalls:
    """An adapter whose framework answers with native tool calls (most of them): an answer
    reads as its tool calls, and an injected action is written back as one."""

    def read(self, agent: str, message: dict[str, Any]) -> list[Action]:
        return tool_call_actions(agent, message)

    def write(self, actions: list[Action], message: dict[str, Any]) -> dict[str, Any]:
        return native_message(actions, message)


@dataclass
class FrameworkRun:
    """One framework run: its history (and verdict), its model calls, how it ended."""

    episode: Episode
    session: Session


def run_framework(
    adapter: Adapter,
    env: Environment,
    tools: tuple[dict[str, Any], ...],
    prompts: dict[str, str],
    gateway: Gateway,
    run_id: str,
    forward: Forward,
    max_turns: int,
    plan: Plan | None = None,
) -> FrameworkRun:
    """Run `adapter`'s framework on `env`'s task behind `gateway`: a recording, or with
    `plan` a replay with an injection. Whatever the framework raises ends the run with
    a reason (a fidelity error names the first differing field); the run is evaluated as
    it stands. A model call the gateway could not forward, a tool environment that did
    not start, or a gateway the framework could not reach ends it `infra_error: ...`, even
    where the framework caught the error and went on: its run is not the agents' doing."""
    recorder = Recorder(env, adapter.read)
    outages: list[str] = []

    def watched(request: dict[str, Any], agent: str) -> Answer:
        try:
            return forward(request, agent)
        except ForwardError as exc:
            outages.append(f"the model did not answer through the gateway ({exc})")
            raise

    def call_tool(name: str, args: dict[str, Any]) -> str:
        try:
            return recorder.call_tool(name, args)
        except InfraError as exc:
            outages.append(str(exc))
            raise

    session = Session(run_id, watched, plan, listener=recorder.on_answer)
    gateway.open(session)
    task = FrameworkTask(
        recorder.history[0].content, tools, prompts,
        lambda agent: gateway.base_url(run_id, agent), call_tool,
        lambda: env.done, max_turns, lambda: recorder.history,
    )  # fmt: skip
    episode = recorder.episode
    try:
        adapter.run(task)
        episode.end_reason = "done" if env.done else "framework ended without an answer"
    except Exception as exc:  # any framework error is this run's, recorded
        episode.end_reason = _reason(exc, session)
    finally:
        gateway.close_run(run_id)
    if outages:
        episode.end_reason = infra_reason(outages[0])
    try:
        episode.verdict = env.evaluate()
    except InfraError as exc:
        episode.end_reason, episode.verdict = infra_reason(str(exc)), None
    return FrameworkRun(episode, session)


_UNREACHABLE = frozenset(
    {"APIConnectionError", "APITimeoutError", "ConnectError", "ConnectTimeout", "ReadTimeout"}
)
"""Exceptions (by class name: each framework wraps its HTTP client's) that say the
framework could not reach the gateway at all."""

_GATEWAY_FAULTS = frozenset({"model", "gateway"})
"""The gateway's error types that are not the agents' doing: the model did not answer
(502), or the gateway itself failed (500)."""


def _outage(exc: BaseException) -> bool:
    """Whether `exc`, or an exception it was raised from, says the gateway could not be
    reached or answered with an infrastructure fault."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        kinds = (type(cur).__name__, *getattr(cur, "kinds", ()))  # a child's: by name
        if any(kind in _UNREACHABLE for kind in kinds):
            return True
        body = getattr(cur, "body", None)
        error = body.get("error", body) if isinstance(body, dict) else None
        if isinstance(error, dict) and error.get("type") in _GATEWAY_FAULTS:
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def _reason(exc: Exception, session: Session) -> str:
    if session.failure:
        return f"fidelity: {session.failure}"
    if isinstance(exc, FidelityError):
        return f"fidelity: {exc}"
    if isinstance(exc, InfraError) or _outage(exc):
        return infra_reason(f"{type(exc).__name__}: {str(exc)[:300]}")
    return f"error: {type(exc).__name__}: {str(exc)[:300]}"
