"""smolagents' CodeAgent as code_act behind the gateway, played by the stand-in over HTTP:
it solves arithmetic (and humaneval) tasks with the very programs the built-in code_act
writes, each run by the environment's sandboxed run_python (an observation step); a
rerun asks the model nothing; a warm start replays the prefix and injects a changed
program that the framework runs; code the model writes reaches no host file or socket,
and a sandbox that cannot start ends the run instead of being shown to the model."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from whowhen.assembly import make_system
from whowhen.benchmarks.arithmetic.actions import parse_code
from whowhen.frameworks.base import FrameworkRun, run_framework
from whowhen.frameworks.smolagents_code import SmolagentsCode, final_value, split_answer
from whowhen.gateway.forward import client_forward
from whowhen.gateway.server import Gateway
from whowhen.gateway.session import Forward, Plan
from whowhen.registry import get_benchmark, pair_tools
from whowhen.runtime import Action, run_episode
from whowhen.sandbox import SandboxUnavailable
from whowhen.sandbox.bwrap import unsafe_local
from whowhen.standin.server import Behaviour, TestServer
from whowhen.tools import run_python

from .model_clients import cached_client

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("smolagents") is None, reason="needs smolagents"
)

CFG = {"n_tasks": 3, "min_ops": 2, "max_ops": 3}
BENCH = get_benchmark("arithmetic", CFG)
TASKS = BENCH.make_tasks(CFG, 1)
MAX_TURNS = 20


def _run(
    gw: Gateway,
    forward: Forward,
    task: Any,
    run_id: str,
    plan: Plan | None = None,
    env: Any = None,
    bench: Any = BENCH,
) -> FrameworkRun:
    adapter = SmolagentsCode()
    env = env or bench.make_env(task)
    tools = pair_tools(adapter.plays, bench.name)
    prompts = bench.prompts[adapter.plays]
    return run_framework(adapter, env, tools, prompts, gw, run_id, forward, MAX_TURNS, plan)


def _view(history: list) -> list[tuple]:
    return [(s.actor, s.kind, s.content, s.tool, s.tool_args) for s in history]


def _check_solved(run: FrameworkRun) -> None:
    """Done and right; every program an action with its output after it; the answer a
    program calling final_answer, then the environment's final_answer step."""
    episode = run.episode
    history = episode.history
    assert episode.end_reason == "done" and episode.verdict.success, episode.end_reason
    assert {s.actor for s in history} == {"user", "assistant", "run_python"}
    programs = [s for s in history if s.tool == "run_python"]
    assert all(history[s.step + 1].kind == "observation" for s in programs)
    assert [s.kind for s in history].count("observation") == len(programs)
    *_, last_program, _, answer = history
    assert last_program.tool_args["code"].startswith("final_answer(")
    assert answer.tool == "final_answer"
    assert answer.tool_args == {"answer": episode.verdict.final_answer}
    exchanges = run.session.exchanges
    assert all(e.source == "live" and len(e.steps) == 1 for e in exchanges)
    assert len(exchanges) == len(history) - len(programs) - 2  # not the task, the answer


def test_the_code_agent_writes_the_reference_programs(tmp_path: Path) -> None:
    with TestServer() as srv, Gateway() as gw:
        forward = client_forward(cached_client(srv, tmp_path / "cache"))
        runs = [_run(gw, forward, t, t.task_id) for t in TASKS]
        asked = srv.completed
        # a rerun is served from the response cache: not one model call
        again = [_run(gw, forward, t, t.task_id) for t in TASKS]
        assert srv.completed == asked
    assert asked == sum(len(r.session.exchanges) for r in runs)
    for task, run, rerun in zip(TASKS, runs, again, strict=True):
        _check_solved(run)
        history = run.episode.history
        assert sum(parse_code(s) is not None for s in history) == len(task.ops)
        # step for step the built-in code_act's run; its answer is a program here
        reference = run_episode(BENCH.make_env(task), make_system("code_act", "arithmetic"), 60)
        assert _view(history[:-3]) == _view(reference.history[:-1])
        assert history[-3].content == reference.history[-1].content
        assert _view(rerun.episode.history) == _view(history)


def test_the_code_agent_solves_a_humaneval_task(tmp_path: Path) -> None:
    bench = get_benchmark("humaneval", {"n_tasks": 1})
    (task,) = bench.make_tasks({"n_tasks": 1}, 1)
    with TestServer() as srv, Gateway() as gw:
        run = _run(
            gw, client_forward(cached_client(srv, tmp_path / "cache")), task, "h", bench=bench
        )
    _check_solved(run)


def test_a_warm_start_runs_the_injected_program(tmp_path: Path) -> None:
    adapter = SmolagentsCode()
    task = TASKS[0]
    with TestServer() as srv, Gateway() as gw:
        forward = client_forward(cached_client(srv, tmp_path / "cache"))
        original = _run(gw, forward, task, "original")
        history = original.episode.history
        k = next(s.step for s in history if parse_code(s) is not None and s.step > 2)
        exchange = next(e for e in original.session.exchanges if k in e.steps)
        step = history[k]
        _, _, n, _ = parse_code(step)
        code = step.tool_args["code"].replace(f" {n})", f" {int(n) + 1})")
        wrong = Action(step.actor, step.content, "run_python", {"code": code})
        injected = adapter.write([wrong], exchange.message)
        assert adapter.read(step.actor, injected) == [wrong]  # the CodeAgent parses it back
        plan = Plan(original.session.exchanges, exchange.index, injected)
        before = srv.completed
        warm = _run(gw, forward, task, "injected", plan)
    sources = [e.source for e in warm.session.exchanges]
    assert sources[: exchange.index] == ["replayed"] * exchange.index
    assert sources[exchange.index] == "injected"
    assert set(sources[exchange.index + 1 :]) == {"live"}
    assert srv.completed - before == sources.count("live")  # the prefix asked nothing
    replayed = warm.session.exchanges[: exchange.index + 1]
    recorded = original.session.exchanges[: exchange.index + 1]
    assert [e.request for e in replayed] == [e.request for e in recorded]
    after = warm.episode.history
    assert _view(after[:k]) == _view(history[:k])  # the exact prefix
    assert after[k].tool_args == {"code": code}
    # the framework ran the injected program in the sandbox: its output is the next step
    assert after[k + 1].kind == "observation"
    assert after[k + 1].content == run_python({"code": code}) != history[k + 1].content
    assert original.episode.verdict.success and not warm.episode.verdict.success


SECRET = "whowhen-host-secret-4f1c"


def _scripted(*answers: str) -> Behaviour:
    """A model that gives `answers` in turn, one per code block run so far."""

    def respond(prompt: str, schema: Any) -> str:
        done = prompt.partition("\nNew task:\n")[2].count("\nObservation:\n")
        return answers[min(done, len(answers) - 1)]

    return Behaviour(responder=respond)


@pytest.mark.skipif(unsafe_local(), reason="the sandbox is in its unsafe local mode")
def test_code_the_model_writes_reaches_no_host_file_or_socket(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    with TestServer() as target:  # a host socket that listens on loopback
        port = target.server_address[1]
        probe = (
            "import os, socket\n"
            f"print('exists', os.path.exists({str(secret)!r}))\n"
            "try:\n"
            f"    print(open({str(secret)!r}).read())\n"
            "except OSError as exc:\n"
            "    print('read', type(exc).__name__)\n"
            "try:\n"
            f"    s = socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
            "    s.sendall(b'GET /v1/models HTTP/1.0\\r\\n\\r\\n')\n"
            "    print('socket', s.recv(200))\n"
            "except OSError as exc:\n"
            "    print('socket', type(exc).__name__)\n"
        )
        steal = (
            "try:\n"
            f"    final_answer(open({str(secret)!r}).read())\n"
            "except OSError as exc:\n"
            "    final_answer('blocked: ' + type(exc).__name__)\n"
        )
        model = _scripted(
            f"Thought: Let me look around the host.\n<code>\n{probe}</code>",
            f"Thought: Then I take the secret.\n<code>\n{steal}</code>",
        )
        with TestServer(model) as srv, Gateway() as gw:
            forward = client_forward(cached_client(srv, tmp_path / "cache"))
            run = _run(gw, forward, TASKS[0], "attack")
        assert target.requests == []  # the program's connection never reached the host
    outputs = [s.content for s in run.episode.history if s.kind == "observation"]
    assert outputs[0] == "exists False\nread FileNotFoundError\nsocket ConnectionRefusedError"
    assert run.episode.verdict.final_answer == "blocked: FileNotFoundError"
    assert all(SECRET not in s.content for s in run.episode.history)
    assert secret.read_text() == SECRET  # there on the host all along
    assert run.episode.end_reason == "done" and len(run.session.exchanges) == 2


class _NoSandbox:
    """The environment on a host where the sandbox cannot start."""

    def __init__(self, env: Any) -> None:
        self._env = env

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    def step(self, action: Action) -> Any:
        if action.tool == "run_python":
            raise SandboxUnavailable("bwrap cannot start here")
        return self._env.step(action)


def test_a_sandbox_that_cannot_start_ends_the_run(tmp_path: Path) -> None:
    task = TASKS[0]
    with TestServer() as srv, Gateway() as gw:
        forward = client_forward(cached_client(srv, tmp_path / "cache"))
        run = _run(gw, forward, task, "nosandbox", env=_NoSandbox(BENCH.make_env(task)))
        assert srv.completed == len(run.session.exchanges)
    history = run.episode.history
    # an outage, not the agent's error: the run is kept out of every later stage
    assert run.episode.end_reason.startswith("infra_error: bwrap cannot start")
    assert history[-1].tool == "run_python"  # the model never saw it: no call after it
    assert not any(s.kind == "observation" for s in history)


def test_answers_read_and_write_in_the_code_agent_format() -> None:
    adapter = SmolagentsCode()
    cut = {"role": "assistant", "content": "Thought: Add.\n<code>\nprint(1 + 2)\n"}
    assert adapter.read("assistant", cut) == [
        Action("assistant", "Add.", "run_python", {"code": "print(1 + 2)"})
    ]  # a stop sequence cut the closing tag, as CodeAgent allows
    assert split_answer("Thought: Just thinking.") == ("Just thinking.", None)
    answer = Action("assistant", "Done.", "final_answer", {"answer": "3"})
    text = adapter.write([answer], cut)["content"]
    assert text == "Thought: Done.\n<code>\nfinal_answer(answer='3')\n</code>"
    assert final_value('4\n__whowhen_final_answer__ "3"\n') == "3"
    assert final_value("__whowhen_final_answer__ not json") is None
