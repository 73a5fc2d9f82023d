"""The stand-in model's responders: deterministic answers for each LLM role (attributor in
every protocol, agent, error generator), computed from the request alone.

`default_responder` is `scripted/standin` (registered with the scripted provider by
`whowhen.standin`) and the HTTP test server's default answer, so both stand-ins answer
alike. It lives above the model layer because the agent role plays benchmark tasks
(parsing problems, writing the calculator or SQL call), which the model layer must not
import. Editing this file changes `scripted/standin`'s revision, so its cached answers
are not reused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from whowhen.agents import protocol
from whowhen.correction import CORRECTION_MARK, REQUEST_CLOSE, REQUEST_OPEN
from whowhen.models.scripted_provider import TURNS
from whowhen.registry import BENCHMARKS, SYSTEMS, pair_tools
from whowhen.runtime import Step
from whowhen.standin.framework_turns import framework_correction, framework_turn
from whowhen.standin.user_agent import corrector_responder
from whowhen.tools import calculate

_STEP_LINE = re.compile(r"^\[\s*(\d+)\] ([^\s(:]+)", re.M)


def attribution_responder(prompt: str, schema: dict[str, Any] | None) -> str:
    """Name the first agent step listed in the prompt (a deterministic stand-in model)."""
    agents = None
    props = (schema or {}).get("properties", {})
    agents = props.get("agent", {}).get("enum")
    mode = next((m for m in props.get("mode", {}).get("enum") or [] if m), None)
    for step, actor in _STEP_LINE.findall(prompt):
        if actor != "user" and (agents is None or actor in agents):
            return json.dumps(
                {
                    "agent": actor,
                    "step": int(step),
                    "mode": mode,
                    "reason": f"{actor} acts first at step {step}.",
                }
            )
    return json.dumps(
        {"agent": (agents or ["unknown"])[0], "step": 0, "mode": None, "reason": "no step found"}
    )


_BLOCK = re.compile(r"^\[(\d+)\] ([^\s(:]+) \((\w+)\): ", re.M)
_CUT = re.compile(r" \[\.\.\. \d+ characters cut\]")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_JUDGE = re.compile(r"Is step \[(\d+)\] \(")
_QUESTION = re.compile(r"\nQuestion: (?:Is step \[|The decisive error is in steps)")
_HALF = re.compile(
    r"first half \(steps \[(\d+)\] to \[(\d+)\]\) or in the second half \(steps \[(\d+)\]"
)


def suspect_steps(prompt: str) -> list[int]:
    """Agent steps that write a number seen in no earlier step of the trajectory shown: a
    value the agent made up (a miscalculation, a misread or distorted value). The stand-in
    model's notion of an error, the same for every protocol, so step_by_step and
    binary_search agree on it."""
    text = prompt.split("Trajectory:", 1)[-1]
    asked = list(_QUESTION.finditer(text))  # the protocol's question (a task may hold one too)
    text = text[: asked[-1].start()] if asked else text
    blocks = list(_BLOCK.finditer(text))
    seen: set[str] = set()
    out = []
    for k, m in enumerate(blocks):
        end = blocks[k + 1].start() if k + 1 < len(blocks) else len(text)
        numbers = set(_NUMBER.findall(_CUT.sub("", text[m.end() : end])))
        agent = m.group(3) != "observation" and m.group(2) not in ("user", "system")
        if agent and numbers - seen:
            out.append(int(m.group(1)))
        seen |= numbers
    return out


def _first_mode(schema: dict[str, Any] | None) -> str | None:
    props = (schema or {}).get("properties", {})
    return next((m for m in props.get("mode", {}).get("enum") or [] if m), None)


def judge_responder(prompt: str, schema: dict[str, Any] | None) -> str:
    """step_by_step: the step in question is decisive when it is a suspect step."""
    step = int(_JUDGE.findall(prompt)[-1])
    decisive = step in suspect_steps(prompt)
    return json.dumps(
        {
            "decisive": decisive,
            "mode": _first_mode(schema) if decisive else None,
            "reason": f"step {step} {'introduces' if decisive else 'adds no'} new value",
        }
    )


def half_responder(prompt: str, schema: dict[str, Any] | None) -> str:
    """binary_search: the first half when the first suspect step lies in it (or before it),
    else the second half (no suspect: the error is the last step, which gave the answer)."""
    first_end = int(_HALF.findall(prompt)[-1][1])
    suspects = suspect_steps(prompt)
    half = "first" if suspects and suspects[0] <= first_end else "second"
    return json.dumps(
        {
            "half": half,
            "mode": _first_mode(schema),
            "reason": f"first suspect step: {suspects[0] if suspects else None}",
        }
    )


def _known() -> dict[str, Any]:
    """The registry's tables the agent role plays from: the benchmarks, the scripted
    systems' policies, and the tools a model playing a pair is offered."""
    return {"benchmarks": BENCHMARKS, "systems": SYSTEMS, "tools": pair_tools}


def agent_responder(prompt: str, schema: dict[str, Any] | None) -> str:
    """Play an agent of a built-in system as its reference policy would, reading only
    the prompt: which role of which benchmark the system prompt gives, and the run so far
    rebuilt from the rendered history (whatever is in it: an injected error, a
    wrong observation, a model's odd turn). Dataset-file tasks get `_file_agent`."""
    rules, _, rest = prompt.partition(protocol.RULES_END + "\n")
    benchmarks, systems = BENCHMARKS, SYSTEMS
    role = _role_of(rules, benchmarks)
    if role is None:
        return _file_agent(prompt)
    system, bench, agent = role
    policy = systems[system][bench]()
    tools = pair_tools(system, bench)
    json_turns = schema is not None  # the team asks for JSON turns with a schema
    history = _history(rest, agent, tools, len(policy.agents) > 1, json_turns)
    action = policy.next_action(history)
    render = protocol.render_json_turn if json_turns else protocol.render_turn
    return render(Step(len(history), agent, "action", action.content, action.tool,
                       action.tool_args))  # fmt: skip


def _role_of(rules: str, benchmarks: dict[str, Any]) -> tuple[str, str, str] | None:
    """(system, benchmark, agent) whose role prompt opens `rules`, if any."""
    for name, spec in benchmarks.items():
        for system, prompts in spec.prompts.items():
            for agent, text in prompts.items():
                if rules.startswith(text + "\n") and (
                    len(prompts) == 1 or f"You are {agent}, working with" in rules
                ):
                    return system, name, agent
    return None


_BLOCK_START = re.compile(
    r"\n(?=\[[\w-]+\]: |Observation \([\w-]+\): |Format reminder: |Reminder: )"
)


def _history(text: str, me: str, tools: Any, team: bool, json_turns: bool) -> list[Step]:
    """The run rebuilt from its rendering (`protocol.to_messages`, flattened)."""
    pieces = TURNS.split(text)  # user text, own turn, user text, ...
    steps: list[Step] = []

    def add(actor: str, kind: str, content: str, tool: Any = None, args: Any = None) -> None:
        steps.append(Step(len(steps), actor, kind, content, tool, args))

    own = protocol.parse_json_turn if json_turns else protocol.parse_turn

    def add_turn(actor: str, body: str) -> None:  # teammates' turns are shown as text
        read = own if actor == me else protocol.parse_turn
        action = read(actor, body, tools, team).action
        add(actor, "action" if action.tool else "message", action.content,
            action.tool, action.tool_args)  # fmt: skip

    for k, piece in enumerate(pieces):
        if k % 2:
            add_turn(me, piece)
            continue
        for block in _BLOCK_START.split(piece) if piece else ():
            block = block.removesuffix("\n")
            if m := protocol.OTHER.match(block):
                add_turn(m.group(1), block[m.end() :])
            elif m := re.match(r"Observation \(([\w-]+)\): ", block):
                add(m.group(1), "observation", block[m.end() :])
            elif not block.startswith(("Format reminder: ", "Reminder: ")):  # not steps
                add("user", "message", block)
    return steps


def _file_agent(prompt: str) -> str:
    """Dataset-file QA: compute 'What is <expression>?', else pick option A."""
    question = prompt.split("Question: ", 1)[-1]
    expr = re.match(r"What is ([-+*/\d\s().]+)\?", question)
    answer = calculate(expr.group(1)) if expr else "A"
    return f"Thought: I know this.\nAction: final_answer({json.dumps({'answer': answer})})"


def generator_responder(prompt: str, schema: dict[str, Any] | None) -> str:
    """Write an 'error': the original arguments with their first number off by one."""
    content = prompt.split("content: ", 1)[-1].split("\ntool: ", 1)[0]
    args = json.loads(prompt.split("arguments: ", 1)[-1].split("\n", 1)[0] or "null")
    text = json.dumps(args, sort_keys=True)
    number = re.search(r"\d+", text)
    if number:
        text = text[: number.start()] + str(int(number.group(0)) + 1) + text[number.end() :]
    return json.dumps({"content": content, "arguments": json.loads(text)})


def has_role(prompt: str) -> bool:
    """Whether a prompt asks for one of the stand-in's own roles (below); a request for
    none of them is a user's own agent (`user_agent`), on the HTTP test server."""
    return (
        protocol.RULES_END in prompt
        or any(mark in prompt for mark in ("Mistake to make:", CORRECTION_MARK))
        or bool(_JUDGE.search(prompt) or _HALF.search(prompt))
        or framework_turn(prompt, _known()) is not None
    )


def correction_responder(prompt: str) -> str:
    """A corrected step (`whowhen.correction`'s prompt, which carries the agent's request):
    for a built-in system's role inside a known framework, that role's reference policy's
    step, slips off (what the stand-in playing it should have done); for any other
    request, the generic policy's that plays a user's own agent."""
    start = prompt.rfind(REQUEST_OPEN)
    end = prompt.find(REQUEST_CLOSE, start)
    try:
        body = json.loads(prompt[start + len(REQUEST_OPEN) : end]) if 0 <= start < end else None
    except ValueError:
        body = None
    action = framework_correction(body, _known()) if isinstance(body, dict) else None
    if action is None:
        return corrector_responder(prompt)
    tool = action.tool
    step = {
        "content": action.content,
        "tool": tool,
        "arguments": action.tool_args if tool else None,
    }
    return json.dumps(step, sort_keys=True)


def slipping_responder(
    slip_rate: float, seed: int = 0
) -> Callable[[str, dict[str, Any] | None], str]:
    """`default_responder` whose agents inside real frameworks slip on a seeded share
    `slip_rate` of their turns (`framework_turns`): framework systems that fail now and
    then, as the scripted systems do, for the test server's `Behaviour.responder`."""

    def respond(prompt: str, schema: dict[str, Any] | None) -> str:
        if CORRECTION_MARK not in prompt:
            turn = framework_turn(prompt, _known(), slip_rate, seed)
            if turn is not None:
                return turn
        return default_responder(prompt, schema)

    return respond


def default_responder(prompt: str, schema: dict[str, Any] | None) -> str:
    """Route by what the request asks for: a corrected step (first: its prompt embeds the
    agent's request, whatever role that was), an agent turn (inside a real framework, or
    in the project's own protocol), an injected error, a step judgment (step_by_step,
    hybrid), a half (binary_search), or an attribution answer."""
    if CORRECTION_MARK in prompt:
        return correction_responder(prompt)
    framework = framework_turn(prompt, _known())
    if framework is not None:
        return framework
    if protocol.RULES_END in prompt:
        return agent_responder(prompt, schema)
    if "Mistake to make:" in prompt:
        return generator_responder(prompt, schema)
    if _JUDGE.search(prompt):
        return judge_responder(prompt, schema)
    if _HALF.search(prompt):
        return half_responder(prompt, schema)
    return attribution_responder(prompt, schema)
