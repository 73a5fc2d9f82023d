"""The expert group chat on the arithmetic benchmark, shaped like the AG2 group chats that
Who&When's Algorithm-Generated runs come from.

The Arithmetic_Expert reads the story and states the plan; the Python_Expert computes one
operation per program, each run by the `Computer_terminal` (an observation, as AG2's code
executor prints it), and now and then reports progress to the Arithmetic_Expert, who
confirms the total to go on from; then it proposes the answer. The Verification_Expert
counts the programs against the story's operations (a short count is sent back, and the
Python_Expert starts over), re-runs the last program, and closes with the answer and
TERMINATE. It trusts the terminal over the proposal, and it re-checks the last step only:
a wrong operand or operation earlier on goes through, as in many recorded chats.

On a share of the tasks the Python_Expert's first attempt stops one operation short, so
runs hold a caught error and a redo (what a false approval or an ignored send-back needs).
"""

from __future__ import annotations

from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedExpertChat
from whowhen.benchmarks.arithmetic.actions import (
    _last_agent,
    _problem,
    approval_action,
    code_action,
    parse_code,
    parse_proposal,
    plan_action,
    progress,
    proposal_action,
    restart_point,
)
from whowhen.benchmarks.arithmetic.phrases import (
    _ACKS,
    _CHECKIN_RE,
    _CHECKINS,
    _COUNT_REJECTS,
    _STYLES,
    PROPOSALS,
    _words,
)
from whowhen.runtime import Action, Step
from whowhen.tools import TERMINAL, code_output

PLANNER, CODER, CHECKER = "Arithmetic_Expert", "Python_Expert", "Verification_Expert"
_SHORT = 0.4
"""Share of tasks on which the first attempt stops one operation short."""
_CHECKIN = 0.35
RERUN = "Let me run the last step again to confirm the result."


class ExpertChatSystem(ScriptedExpertChat):
    agents = (PLANNER, CODER, CHECKER)
    end = "\n\nTERMINATE"

    def speaker(self, history: Sequence[Step]) -> str:
        last = _last_agent(history)
        if last is None:
            return PLANNER
        if last.tool == TERMINAL:  # the expert who ran code reads its output
            return last.actor
        if last.actor == CODER:
            return CHECKER if parse_proposal(last.content) else PLANNER
        return CODER

    def speak(self, who: str, history: Sequence[Step]) -> Action:
        if who == PLANNER:
            return self._plan_or_ack(history)
        if who == CHECKER:
            return self._verify(history)
        return self._compute(history)

    def _plan_or_ack(self, history: Sequence[Step]) -> Action:
        if _last_agent(history, PLANNER) is None:
            return plan_action(history, PLANNER)
        since = restart_point(history, CHECKER)
        done = progress(history, CODER, since, tool=TERMINAL)
        text = phrasing.phrase(history, "arith.ack", _ACKS, k=len(done.steps), total=done.total)
        return Action(PLANNER, text)

    def _compute(self, history: Sequence[Step]) -> Action:
        _, ops = _problem(history)
        since = restart_point(history, CHECKER)
        done = progress(history, CODER, since, tool=TERMINAL)
        k = len(done.steps)
        short = not since and phrasing.task_chance(history, "experts.short", _SHORT)
        goal = len(ops) - 1 if short and len(ops) > 2 else len(ops)
        last = _last_agent(history, CODER)
        if (
            2 <= k < goal
            and last is not None
            and last.step == done.steps[-1].step
            and not any(_CHECKIN_RE.match(s.content) for s in done.steps[-2:])
            and not any(s.actor == PLANNER for s in history[done.steps[-2].step :])
            and phrasing.chance(history, "experts.checkin", _CHECKIN)
        ):
            left = _words(len(ops) - k)
            fields = {"k": k, "n": len(ops), "total": done.total, "left": left}
            return Action(CODER, phrasing.phrase(history, "arith.checkin", _CHECKINS, **fields))
        if k < goal:
            op, n = ops[k]
            style = phrasing.choose(history, "arith.calc", range(_STYLES))
            return code_action(CODER, op, done.total, str(n), style=style, tool=TERMINAL)
        style = phrasing.choose(history, "arith.propose", range(len(PROPOSALS)))
        return proposal_action(CODER, len(ops), done.total, style)

    def _verify(self, history: Sequence[Step]) -> Action:
        _, ops = _problem(history)
        since = restart_point(history, CHECKER)
        done = progress(history, CODER, since, tool=TERMINAL)
        mine = _last_agent(history, CHECKER)
        if mine is not None and mine.tool == TERMINAL and mine.step > since:
            out = code_output(history[-1].content) if history[-1].kind == "observation" else ""
            proposed = parse_proposal(_last_agent(history, CODER).content)  # type: ignore[union-attr]
            answer = out or (proposed[1] if proposed else done.total)
            return approval_action(answer, len(ops), history, CHECKER, self.end)
        if len(done.steps) != len(ops):
            fields = {"k": len(ops), "c": len(done.steps)}
            text = phrasing.phrase(history, "arith.reject", _COUNT_REJECTS, **fields)
            return Action(CHECKER, text)
        parsed = parse_code(done.steps[-1])
        assert parsed is not None
        op, a, n, code_a = parsed
        code = code_action(CHECKER, op, a, n, code_a).tool_args or {}
        text = f"{RERUN}\n```python\n{code['code']}\n```"
        return Action(CHECKER, text, TERMINAL, code)
