"""The code-as-action policy of the arithmetic benchmark: one small program per
operation, each working from the running total the agent last stated (a program's printed
result, a test program's total, a note), now and then a test program that undoes the last
step, then a recap and the answer."""

from __future__ import annotations

from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedReact
from whowhen.benchmarks.arithmetic.actions import (
    _last_agent,
    _problem,
    _task_text,
    answer_action,
    code_action,
    parse_code,
    plan_action,
    progress,
)
from whowhen.benchmarks.arithmetic.phrases import (
    _CODE_CHECKS,
    _CODE_INVERSE,
    _CODE_NOTES,
    _CODE_RECAPS,
    _STYLES,
    _words,
)
from whowhen.benchmarks.arithmetic.tasks import parse_story
from whowhen.runtime import Action, Step


class CodeActSystem(ScriptedReact):
    """Single agent acting in code: a plan, one small program per operation, each reading
    the running total from the last program's output, now and then a test program that
    undoes the last step and asserts the old total, then a recap and the answer."""

    name = "code_act"

    def act(self, history: Sequence[Step]) -> Action:
        if len(history) <= 1:
            return plan_action(history, "assistant")
        start, ops = _problem(history)
        done = progress(history, "assistant", tool="run_python")
        last = _last_agent(history, "assistant")
        name, item = parse_story(_task_text(history))
        fields = {"total": done.total, "previous": done.previous, "start": start}
        last_op = done.steps[-1] if done.steps else None
        if (
            last is not None
            and last_op is not None
            and last.step == last_op.step
            and phrasing.chance(history, "code.check", 0.25)
        ):
            op, _, n, left = parse_code(last_op) or ("add", "", "0", "")
            code = (
                f"total = {done.total}\nprevious = total {_CODE_INVERSE[op]} {n}\n"
                f"assert previous == {left}, previous\nprint(previous)"
            )
            text = phrasing.phrase(
                history, "code.check", _CODE_CHECKS, **{**fields, "previous": left}
            )
            return Action("assistant", text, "run_python", {"code": code})
        if (
            last is not None
            and last.tool == "run_python"
            and parse_code(last) is None
            and phrasing.chance(history, "code.note", 0.6)
        ):
            left = _words(len(ops) - len(done.steps))
            text = phrasing.phrase(history, "code.note", _CODE_NOTES, left=left, **fields)
            return Action("assistant", text)
        if len(done.steps) < len(ops):
            op, n = ops[len(done.steps)]
            style = phrasing.choose(history, "arith.calc", range(_STYLES))
            return code_action("assistant", op, done.total, str(n), style=style)
        if (
            last is not None
            and last.tool is None
            and last.content.startswith(("Recap:", "Every sentence", "Summing up"))
        ):
            return answer_action("assistant", done.total, history)
        text = phrasing.phrase(
            history, "code.recap", _CODE_RECAPS, k=len(ops), name=name, item=item, **fields
        )
        return Action("assistant", text)
