"""A two-agent program with the plain `openai` client: a planner writes the expression
for a question, a solver computes it with a calculator tool. It knows nothing of whowhen:
it reads OPENAI_BASE_URL like any OpenAI program, prints its answer, and exits 0 when the
answer is the expected one.

    python examples/plan_solve.py "(17 + 25) * 3" 126
"""

from __future__ import annotations

import ast
import json
import operator
import sys

from openai import OpenAI

PLANNER = "You are the planner agent. Write the arithmetic expression that answers the task."
SOLVER = "You are the solver agent. Compute the expression you are given with the calculator."
CALCULATOR = {
    "type": "function",
    "function": {
        "name": "calculator",
        "description": "Evaluate an arithmetic expression.",
        "parameters": {
            "type": "object",
            "properties": {"expression": {"type": "string"}},
            "required": ["expression"],
        },
    },
}
_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
}


def calculate(expression: str) -> str:
    """+, -, *, / and parentheses over numbers; anything else is an error message."""

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](value(node.operand))
        raise ValueError("not arithmetic")

    try:
        result = value(ast.parse(expression, mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError) as exc:
        return f"Error: {exc}"
    return str(int(result)) if float(result).is_integer() else str(result)


def main(task: str, expected: str) -> int:
    client = OpenAI()  # OPENAI_BASE_URL and OPENAI_API_KEY from the environment
    plan = (
        client.chat.completions.create(
            model="any",
            messages=[{"role": "system", "content": PLANNER}, {"role": "user", "content": task}],
        )
        .choices[0]
        .message.content
        or ""
    )
    messages = [{"role": "system", "content": SOLVER}, {"role": "user", "content": plan}]
    for _ in range(4):
        reply = (
            client.chat.completions.create(model="any", messages=messages, tools=[CALCULATOR])
            .choices[0]
            .message
        )
        if not reply.tool_calls:
            answer = (reply.content or "").strip()
            print(answer)
            return 0 if answer == expected else 1
        messages.append(reply.model_dump(exclude_none=True))
        for call in reply.tool_calls:
            args = json.loads(call.function.arguments or "{}")
            result = calculate(str(args.get("expression", "")))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    print("no answer")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
