"""smolagents (`pip install -e '.[smolagents]'`): a `CodeAgent` playing `code_act`'s one
agent, its code run by the benchmark environment's sandboxed `run_python`.

The agent's model is smolagents' own `OpenAIModel` pointed at the gateway, so every call
(its system prompt, its Thought / `<code>` format, the parse errors it reports back) is
recorded as smolagents sent it. The code it writes never runs in smolagents' in-process
interpreter (which is no security boundary): `SandboxExecutor` hands each program to the
environment's `run_python` tool, so it runs in the project sandbox and its output is an
observation step like any built-in code_act run's. The sandbox cannot call back into
the host, so the program's `final_answer(x)` is a prelude function that prints a marker
line with the value and exits; the executor reads it and gives the environment the
answer.

Each program runs in a fresh process: variables do not persist between code blocks (as
they would in smolagents' own executor), and only `final_answer` is callable from code.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from whowhen.frameworks.base import FrameworkTask
from whowhen.frameworks.smolagents_adapter import gateway_model
from whowhen.runtime import Action

TAGS = ("<code>", "</code>")  # CodeAgent's default code_block_tags (smolagents >= 1.17)
FINAL_MARK = "__whowhen_final_answer__ "
"""Starts the line a program's `final_answer(x)` prints: the marker, then x as JSON."""

PRELUDE = (
    "def final_answer(answer=None):\n"
    "    import json, os, sys\n"
    f"    print({FINAL_MARK!r} + json.dumps(str(answer)), flush=True)\n"
    "    sys.stderr.flush()\n"
    "    os._exit(0)  # not SystemExit: a bare except in the program must not swallow it\n"
)
"""Put before every program: smolagents' `final_answer` tool, inside the sandbox."""


def final_value(output: str) -> str | None:
    """The value a program's `final_answer` printed (its last marker line), or None."""
    for line in reversed(output.splitlines()):
        if line.startswith(FINAL_MARK):
            try:
                value = json.loads(line.removeprefix(FINAL_MARK))
            except ValueError:
                continue  # a line that only looks like one: the program printed it
            return value if isinstance(value, str) else None
    return None


def _executor(task: FrameworkTask) -> Any:
    """A smolagents `PythonExecutor` that runs code through the environment's run_python."""
    from smolagents.local_python_executor import (  # deferred: an optional extra
        CodeOutput,
        PythonExecutor,
    )

    class SandboxExecutor(PythonExecutor):
        """Every program in the project sandbox; `final_answer` reaches the environment.

        A program's own error comes back in its output. A failure of the tool itself (the
        sandbox cannot start) is the run's, not the model's: it is kept in `failure` and
        the agent stopped (`stop`) before its next model call, and `run` raises it."""

        def __init__(self) -> None:
            self.failure: Exception | None = None
            self.stop: Callable[[], None] = lambda: None

        def send_tools(self, tools: dict[str, Any]) -> None:
            other = sorted(set(tools) - {"final_answer"})
            if other:  # the sandbox has no way back to a host tool
                raise ValueError(f"tools not callable from sandboxed code: {other}")

        def send_variables(self, variables: dict[str, Any]) -> None:
            if variables:  # each program is a fresh process: nothing to hand them to
                raise ValueError(f"variables cannot reach sandboxed code: {sorted(variables)}")

        def __call__(self, code_action: str) -> Any:
            try:
                output = task.call_tool("run_python", {"code": PRELUDE + code_action})
                answer = final_value(output)
                if answer is not None:
                    task.call_tool("final_answer", {"answer": answer})
            except Exception as exc:  # smolagents would show it to the model: stop instead
                self.failure = exc
                self.stop()
                raise
            if answer is None:
                return CodeOutput(output=None, logs=output + "\n", is_final_answer=False)
            return CodeOutput(output=answer, logs=output + "\n", is_final_answer=True)

    return SandboxExecutor()


def split_answer(text: str) -> tuple[str, str | None]:
    """(thought, code) of a CodeAgent answer, the code as smolagents parses it (None: no
    code block, which smolagents reports back as a parse error)."""
    from smolagents.local_python_executor import fix_final_answer_code  # deferred: optional
    from smolagents.utils import parse_code_blobs  # deferred: an optional extra

    if not text.strip().endswith(TAGS[1]):  # as CodeAgent does (a stop sequence cut it)
        text += TAGS[1]
    try:
        code = fix_final_answer_code(parse_code_blobs(text, TAGS))
    except ValueError:
        code = None
    cut = min((i for i in (text.find(TAGS[0]), text.find("```py")) if i >= 0), default=-1)
    thought = (text[:cut] if code is not None and cut >= 0 else text).removesuffix(TAGS[1])
    thought = thought.strip()
    return thought.removeprefix("Thought:").strip(), code


def _call(action: Action) -> str:
    """The Python an action's tool call is in code: run_python's code as it stands, any
    other tool as a call of the function of that name."""
    args = action.tool_args or {}
    if action.tool == "run_python":
        return str(args.get("code", ""))
    keywords = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{action.tool}({keywords})"


def answer_text(actions: list[Action]) -> str:
    """A CodeAgent answer holding `actions`: the first one's text as the Thought, then a
    code block per tool call (smolagents runs them joined, as one program)."""
    thought = actions[0].content.strip() if actions else ""
    blocks = [f"{TAGS[0]}\n{_call(a)}\n{TAGS[1]}" for a in actions if a.tool is not None]
    head = f"Thought: {thought}" if thought else ""
    return "\n".join(part for part in (head, *blocks) if part)


class SmolagentsCode:
    """`smolagents_code_act`: smolagents' CodeAgent as code_act's `assistant`, its code
    run in the project sandbox."""

    system = "smolagents_code_act"
    plays = "code_act"
    agents = ("assistant",)
    volatile: tuple[str, ...] = ()

    def run(self, task: FrameworkTask) -> None:
        from smolagents import CodeAgent, LogLevel  # deferred: an optional extra

        (agent,) = self.agents
        executor = _executor(task)
        runner = CodeAgent(
            tools=[],  # smolagents adds its final_answer; the sandbox's prelude defines it
            model=gateway_model(task, agent),
            executor=executor,
            code_block_tags=TAGS,
            max_steps=task.max_turns,
            verbosity_level=LogLevel.OFF,
            instructions=task.prompts[agent],
        )
        executor.stop = runner.interrupt
        try:
            runner.run(task.text)
        except Exception:
            if executor.failure is not None:  # the host's failure, not smolagents' wrapper
                raise executor.failure from None
            raise

    def read(self, agent: str, message: dict[str, Any]) -> list[Action]:
        """One action: the code smolagents will run (as `run_python`), or a message."""
        thought, code = split_answer(message.get("content") or "")
        if code is None:
            return [Action(agent, thought)]
        return [Action(agent, thought, "run_python", {"code": code})]

    def write(self, actions: list[Action], message: dict[str, Any]) -> dict[str, Any]:
        """The recorded answer rewritten in CodeAgent's format to hold `actions`."""
        return {"role": "assistant", "content": answer_text(actions)}
