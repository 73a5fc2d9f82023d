"""The stand-in playing agents inside real frameworks: it reads the framework's own
conversation format back into the run's steps and asks the built-in system's reference
policy for the next action, as `responders.agent_responder` does for the project's own
prompts. Which role it plays comes from the role prompt the adapter put in the system
prompt; everything else (tools, history) from the framework's request.

One reader per framework format:
- smolagents ToolCallingAgent: its system prompt, "New task:\\n<task>", assistant turns
  "<thought>\\nCalling tools:\\n[<Python repr of the calls>]", user turns
  "Observation:\\n<text>".
- smolagents CodeAgent: its system prompt, "New task:\\n<task>", assistant turns
  "Thought: <thought>\\n<code>\\n<program>\\n</code>" followed by "Calling tools:\\n[<the
  python_interpreter call>]" (a turn without code gets smolagents' parse error back,
  which is no step), user turns "Observation:\\nExecution logs:\\n<output>\\nLast output
  from code snippet:\\n...". Its answer is a Thought and a code block; the final answer a
  block calling `final_answer(answer=...)`.
- native chat (AG2's group chat, LangGraph's graph): the role prompt as the system
  message, then the task and the chat with native tool calls and tool results, named
  speakers as `[name]: ...` once flattened (unnamed assistant turns are the asked
  agent's own).

Like the harness's scripted agents, the stand-in inside a framework can slip
(`framework_turn`'s `slip_rate`, decided by a hash of the request, so a run slips the
same way every time): a number in the tool call's arguments mistyped
(`slips.typo`). That is how a framework system comes to fail naturally under the
stand-in. Asked to correct one of its steps (`framework_correction`), it answers with
the reference policy's step for that request, slips off.
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from whowhen.agents.protocol import RULES_END
from whowhen.models.scripted_provider import ACTION_LINE, TURNS, chat_turns, flatten
from whowhen.runtime import Action, Step
from whowhen.slips import typo
from whowhen.standin.magentic_turns import asked, is_magentic, magentic_turn

SMOLAGENTS_TOOL_CALLING = "You are an expert assistant who can solve any task using tool calls."
SMOLAGENTS_CODE = "You are an expert assistant who can solve any task using code blobs."


Role = tuple[str, str, str]
"""(system, benchmark, agent)."""


@dataclass(frozen=True)
class Turn:
    """A framework's request read back: the role asked, the run so far, and whether the
    answer is a CodeAgent's (a Thought and a code block)."""

    role: Role
    steps: list[Step]
    code: bool = False


def read_turn(prompt: str, known: dict[str, Any]) -> Turn | None:
    """The role and run a known framework's request holds, else None. `known` is the
    registry's tables (benchmarks, systems) as `responders` hands them over."""
    if prompt.startswith(SMOLAGENTS_TOOL_CALLING):
        return _smolagents_tool_calling(prompt, known)
    if prompt.startswith(SMOLAGENTS_CODE):
        return _smolagents_code(prompt, known)
    if RULES_END in prompt:  # the project's own agent protocol, not a framework's
        return None
    opening = _longest(known["benchmarks"], lambda text: prompt.startswith(text + "\n"))
    if opening is None:
        return None
    size, role = opening
    return _native_chat(prompt[size + 1 :], role)


def framework_turn(
    prompt: str, known: dict[str, Any], slip_rate: float = 0.0, seed: int = 0
) -> str | None:
    """The next turn when `prompt` is a known framework's request, else None: the
    reference policy's action, mistyped for a seeded share `slip_rate` of requests."""
    if is_magentic(prompt) and RULES_END not in prompt:  # not the project's own protocol
        return _magentic(prompt, known, slip_rate, seed)
    turn = read_turn(prompt, known)
    if turn is None:
        return None
    action = _maybe_slipped(_next_action(turn.role, turn.steps, known), prompt, slip_rate, seed)
    return _code_reply(action) if turn.code else _play(action)


def _maybe_slipped(action: Action, prompt: str, slip_rate: float, seed: int) -> Action:
    digest = hashlib.sha256(json.dumps([seed, prompt]).encode()).digest()
    if slip_rate > 0 and int.from_bytes(digest[:8], "big") / 2**64 < slip_rate:
        return _slipped(action, random.Random(digest[8:]))
    return action


def _magentic(prompt: str, known: dict[str, Any], slip_rate: float, seed: int) -> str | None:
    """A turn of the ledger team inside Magentic-One (`magentic_turns`); the team's
    benchmark is found by the role prompts its workers' descriptions hold."""
    own = _longest(known["benchmarks"], lambda text: prompt.startswith(text + "\n"))
    role = own[1] if own is not None else role_in(prompt, known["benchmarks"])
    ledgers = known["systems"].get("ledger", {})
    ours = role is not None and role[0] == "ledger" and role[1] in ledgers
    policy = ledgers[role[1]]() if ours else None  # type: ignore[index]
    if policy is None and asked(prompt) != "facts":
        return None
    reply = magentic_turn(prompt, role, policy)
    if isinstance(reply, str):
        return reply
    return _play(_maybe_slipped(reply, prompt, slip_rate, seed))


def framework_correction(body: dict[str, Any], known: dict[str, Any]) -> Action | None:
    """The reference policy's step for a framework's request `body` (its Chat Completions
    messages), slips off; None when the request is no known framework role's or the
    policy cannot act on it."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    turn = read_turn(flatten(chat_turns(messages)), known)
    if turn is None:
        return None
    try:
        action = _next_action(turn.role, turn.steps, known)
    except Exception:  # a history the policy cannot read: no reference step
        return None
    if turn.code and action.tool is not None:  # a CodeAgent's step is the program it runs
        return Action(action.actor, action.content, "run_python", {"code": _program(action)})
    return action


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _slipped(action: Action, rng: random.Random) -> Action:
    """`action` with the first number in its tool call's arguments mistyped (an action
    without one is kept as it is)."""
    text = json.dumps(action.tool_args or {}, sort_keys=True)
    found = _NUMBER.search(text)
    if action.tool is None or found is None:
        return action
    wrong = typo(found.group(0), rng)
    try:
        args = json.loads(text[: found.start()] + wrong + text[found.end() :])
    except ValueError:
        return action
    return Action(action.actor, action.content, action.tool, args)


def _longest(benchmarks: dict[str, Any], fits: Callable[[str], bool]) -> tuple[int, Role] | None:
    """(length, (system, benchmark, agent)) of the longest role prompt that `fits`."""
    found = [
        (len(text), (system, name, agent))
        for name, spec in benchmarks.items()
        for system, prompts in spec.prompts.items()
        for agent, text in prompts.items()
        if fits(text)
    ]
    return max(found) if found else None


def _next_action(role: Role, steps: list[Step], known: dict[str, Any]) -> Action:
    """The reference policy's next action after `steps`."""
    system, bench, _ = role
    return known["systems"][system][bench]().next_action(steps)


def _play(action: Action) -> str:
    """`action` as a text-protocol turn (the server turns an `Action:` line into a native
    tool call when tools are offered)."""
    if action.tool is None:
        return action.content
    return f"{action.content}\nAction: {action.tool}({json.dumps(action.tool_args or {})})"


_BLOCK = re.compile(r"\n(?=\[[\w-]+\]: |Observation \([\w-]+\): )")
_NAMED = re.compile(r"^\[([\w-]+)\]: ")


def _native_chat(rest: str, role: Role) -> Turn:
    """A named-speaker chat with native tool calls: the first message is the task."""
    me = role[2]
    steps: list[Step] = []

    def add(actor: str, kind: str, content: str, tool: Any = None, args: Any = None) -> None:
        steps.append(Step(len(steps), actor, kind, content, tool, args))

    def turn(actor: str, text: str) -> None:
        calls = list(ACTION_LINE.finditer(text))
        content = text[: calls[0].start()].strip() if calls else text.strip()
        for n, call in enumerate(calls):
            add(actor, "action", content if n == 0 else "", call[1], _arguments(call[2]))
        if not calls:
            add(actor, "message", content)

    for k, piece in enumerate(TURNS.split(rest)):
        if k % 2:
            named = _NAMED.match(piece)
            turn(named[1] if named else me, piece[named.end() :] if named else piece)
            continue
        for block in _BLOCK.split(piece) if piece else ():
            block = block.strip("\n")
            if m := re.match(r"Observation \(([\w-]+)\): ", block):
                add(m[1], "observation", block[m.end() :])
            elif (named := _NAMED.match(block)) and steps:
                turn(named[1], block[named.end() :])
            elif block:
                add("user", "message", block[named.end() :] if named else block)
    return Turn(role, steps)


def role_in(system_text: str, benchmarks: dict[str, Any]) -> tuple[str, str, str] | None:
    """(system, benchmark, agent) whose role prompt the framework's system prompt holds
    (the longest, should one contain another)."""
    found = _longest(benchmarks, lambda text: text in system_text)
    return found[1] if found else None


def _smolagents_tool_calling(prompt: str, known: dict[str, Any]) -> Turn | None:
    head, _, rest = prompt.partition("\nNew task:\n")
    role = role_in(head, known["benchmarks"])
    if role is None:
        return None
    agent = role[2]
    pieces = TURNS.split(rest)  # task text (+ user turns), own turn, user turns, ...
    steps: list[Step] = []

    def add(actor: str, kind: str, content: str, tool: Any = None, args: Any = None) -> None:
        steps.append(Step(len(steps), actor, kind, content, tool, args))

    last_tool = "tool"
    for k, piece in enumerate(pieces):
        if k % 2:  # the agent's own turn
            thought, _, calls = piece.partition("Calling tools:\n")
            for n, call in enumerate(_calls(calls)):
                fn = call.get("function") or {}
                last_tool = fn.get("name") or "tool"
                add(agent, "action", thought.strip() if n == 0 else "", last_tool,
                    _arguments(fn.get("arguments")))  # fmt: skip
            if not calls:
                add(agent, "message", thought.strip())
        elif k == 0:
            add("user", "message", piece.strip())
        elif piece.startswith("Observation:\n"):
            add(last_tool, "observation", piece.removeprefix("Observation:\n").strip())
        elif piece.strip():
            add("user", "message", piece.strip())
    return Turn(role, steps)


def _calls(text: str) -> list[dict[str, Any]]:
    """smolagents writes the calls as a Python list of dicts (repr, not JSON)."""
    text = text.strip()
    if not text:
        return []
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return []
    return [c for c in value if isinstance(c, dict)] if isinstance(value, list) else []


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


_CODE_OPEN, _CODE_CLOSE = "<code>", "</code>"
_LOGS, _LAST = "Observation:\nExecution logs:\n", "Last output from code snippet:"


def _smolagents_code(prompt: str, known: dict[str, Any]) -> Turn | None:
    """A CodeAgent's request: its code blocks are run_python actions, their execution
    logs the observations; smolagents' error feedback is not a step."""
    head, _, rest = prompt.partition("\nNew task:\n")
    role = role_in(head, known["benchmarks"])
    if role is None:
        return None
    steps: list[Step] = []

    def add(actor: str, kind: str, content: str, tool: Any = None, args: Any = None) -> None:
        steps.append(Step(len(steps), actor, kind, content, tool, args))

    for k, piece in enumerate(TURNS.split(rest)):
        if k % 2:  # the agent's own turn
            text, _, calls = piece.partition("\nCalling tools:\n")
            ran = _calls(calls)
            code = (ran[0].get("function") or {}).get("arguments") if ran else None
            if isinstance(code, str):
                add(role[2], "action", _thought(text, code=True), "run_python", {"code": code})
            else:
                add(role[2], "message", _thought(text, code=False))
        elif k == 0:
            add("user", "message", piece.strip())
        elif piece.startswith(_LOGS):
            logs = piece.removeprefix(_LOGS)
            logs = logs.rpartition(_LAST)[0] if _LAST in logs else logs
            add("run_python", "observation", logs.removesuffix("\n"))
    return Turn(role, steps, code=True)


def _thought(text: str, code: bool) -> str:
    """The Thought of a CodeAgent turn: the text before its code (smolagents closes a
    turn without a code block with the closing tag, as a stop sequence would have)."""
    cuts = [i for i in (text.find(_CODE_OPEN), text.find("```py")) if i >= 0]
    text = text[: min(cuts)] if code and cuts else text.strip().removesuffix(_CODE_CLOSE)
    return text.strip().removeprefix("Thought:").strip()


def _code_reply(action: Action) -> str:
    """`action` as a CodeAgent answer: a Thought, and its tool call as a code block
    (run_python's program as it stands, another tool as a call of that function)."""
    thought = f"Thought: {action.content}"
    if action.tool is None:
        return thought
    return f"{thought}\n{_CODE_OPEN}\n{_program(action)}\n{_CODE_CLOSE}"


def _program(action: Action) -> str:
    """A tool call as a CodeAgent's program: run_python's as it stands, another tool's
    as a call of that function."""
    args = action.tool_args or {}
    if action.tool == "run_python":
        return str(args.get("code", ""))
    return f"{action.tool}({', '.join(f'{k}={v!r}' for k, v in args.items())})"
