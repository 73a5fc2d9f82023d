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
from typing import Any

from whowhen.benchmarks.arithmetic.actions import calc_action
from whowhen.benchmarks.arithmetic.tasks import parse_problem
from whowhen.benchmarks.table_qa.tasks import parse_question, query_for
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


_OBS = re.compile(r"^Observation \(calculator\): (\S+)", re.M)


def agent_responder(prompt: str, schema: dict[str, Any] | None) -> str:
    """Play the arithmetic agent through the text action protocol, reading only the prompt:
    the problem, and the calculator observations so far (a wrong one propagates)."""
    if "Question: What is the" in prompt:
        return _table_agent(prompt)
    if prompt.startswith("Answer the question") or "\nAnswer the question" in prompt:
        return _file_agent(prompt)

    problem = prompt.split("Problem: ", 1)[-1].split("\n", 1)[0]
    start, ops = parse_problem(problem)
    observations = _OBS.findall(prompt)
    total = observations[-1] if observations else str(start)
    if len(observations) >= len(ops):
        return (
            f"Thought: All operations are done; the answer is {total}.\n"
            f'Action: final_answer({{"answer": "{total}"}})'
        )
    op, n = ops[len(observations)]
    action = calc_action("assistant", op, total, str(n))
    return f"Thought: {action.content}\nAction: calculator({json.dumps(action.tool_args)})"


def _table_agent(prompt: str) -> str:
    """Table QA: send the question's query, then answer with the value it returned."""
    results = re.findall(r"^Observation \(sql\): value\n(\S+)", prompt, re.M)
    if results:
        return (
            f"Thought: The query returned {results[-1]}.\n"
            f'Action: final_answer({{"answer": "{results[-1]}"}})'
        )
    query = query_for(*parse_question(prompt.split("Question: ", 1)[1]))
    return f"Thought: I will query the table.\nAction: sql({json.dumps({'query': query})})"


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
    return json.dumps({"content": content, "arguments": text})


def default_responder(prompt: str, schema: dict[str, Any] | None) -> str:
    """Route by what the request asks for: an agent turn, an injected error, a step
    judgment (step_by_step, hybrid), a half (binary_search), or an attribution answer."""
    if "Call one tool per turn" in prompt:
        return agent_responder(prompt, schema)
    if "Mistake to make:" in prompt:
        return generator_responder(prompt, schema)
    if _JUDGE.search(prompt):
        return judge_responder(prompt, schema)
    if _HALF.search(prompt):
        return half_responder(prompt, schema)
    return attribution_responder(prompt, schema)
