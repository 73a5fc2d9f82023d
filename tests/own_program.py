"""A user's own agent program for the record / replay / blame tests, written to a file
by the test: it uses the plain `openai` client and nothing of whowhen, and its two
agents have names that appear nowhere in the project's code (a test checks that), so
whatever the project does with them, it learned from the program's own requests."""

from __future__ import annotations

import sys
from pathlib import Path

PLANNER, SOLVER = "quillwright", "tallyman"
"""The agents' roles, as their system prompts declare them."""

SOURCE = """
import ast, json, operator, os, sys
from openai import OpenAI

PLANNER = "You are the {planner} agent. Write the arithmetic expression for the task."
SOLVER = "You are the {solver} agent. Compute the expression with the calculator."
CALCULATOR = {{"type": "function", "function": {{
    "name": "calculator", "description": "Evaluate an arithmetic expression.",
    "parameters": {{"type": "object", "properties": {{"expression": {{"type": "string"}}}},
                   "required": ["expression"]}}}}}}
OPS = {{ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
       ast.Div: operator.truediv}}


def calculate(expression):
    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in OPS:
            return OPS[type(node.op)](value(node.left), value(node.right))
        raise ValueError("not arithmetic")
    try:
        result = value(ast.parse(expression, mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError) as exc:
        return "Error: " + str(exc)
    return str(int(result)) if float(result).is_integer() else str(result)


def main(task, expected):
    client = OpenAI()
    plan = client.chat.completions.create(model="any", messages=[
        {{"role": "system", "content": PLANNER}}, {{"role": "user", "content": task}}],
    ).choices[0].message.content or ""
    messages = [{{"role": "system", "content": SOLVER}}, {{"role": "user", "content": plan}}]
    for _ in range(4):
        reply = client.chat.completions.create(
            model="any", messages=messages, tools=[CALCULATOR]).choices[0].message
        if not reply.tool_calls:
            print((reply.content or "").strip())
            return 0 if (reply.content or "").strip() == expected else 1
        messages.append(reply.model_dump(exclude_none=True))
        for call in reply.tool_calls:
            args = json.loads(call.function.arguments or "{{}}")
            messages.append({{"role": "tool", "tool_call_id": call.id,
                             "content": calculate(str(args.get("expression", "")))}})
    return 1


sys.exit(main(sys.argv[1], sys.argv[2]))
"""


def write_program(folder: Path) -> list[str]:
    """The program written to `folder`; the command that runs it (task and answer follow)."""
    path = folder / "plan_and_solve.py"
    path.write_text(SOURCE.format(planner=PLANNER, solver=SOLVER))
    return [sys.executable, str(path)]
