"""Offline mode classifier: which taxonomy mode an erroneous action shows, from how it
differs from the corrected one (the reference policy's action for the same history).

Rules per action type, most specific first; each looks only at the two actions and the
visible history before them, as a reviewer would:

- a checker (verifier, reviewer, tester) that approves or finishes where the correction
  rejects -> verification.false_approval;
- finishing (final_answer, checkout) where the correction still works ->
  planning.premature_finish; another tool with the same intent -> action.wrong_tool;
- same tool, same stated intent, other arguments -> action.wrong_tool_argument;
- computations (calculator, sql, `print(a op b)` programs): another operator ->
  reasoning.wrong_operator; a number that a perception tool showed differently ->
  perception.misread_value; another operand -> reasoning.wrong_operand;
- code (a `def` changed) -> reasoning.logic_bug;
- answers: a count off by one over detections -> reasoning.miscount; the value printed
  next to the right one in the latest observation -> perception.misread_value; a value or
  name that belongs to another object in the observations ->
  perception.misidentified_object; a perception reading carried wrongly ->
  perception.misread_value;
- navigation with a changed intent (read, search, sample_frames) -> planning.wrong_subgoal;
  a click on another item for a stated reason -> perception.misidentified_object;
- messages: a repeat of the sender's earlier message -> coordination.ignored_message;
  otherwise a changed report or instruction -> coordination.distorted_handoff.

Returns None when no rule fits: those failures are clustered into candidate new modes.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence

from whowhen.runtime import Action, Step

CHECKERS = ("verifier", "reviewer", "tester")
FINISH = ("final_answer", "checkout")
PERCEPTION_TOOLS = ("read_chart", "detect_objects", "sample_frames")
COMPUTE = ("calculator", "sql", "run_python")
NAVIGATE = ("read", "search", "sample_frames", "detect_objects")
_NUM = re.compile(r"-?\d+(?:\.\d+)?")
_OPS = re.compile(r"(?<=[\d)\s])([-+*/]{1,2})(?=[\s(\d])|\b(SUM|AVG|MAX|MIN)\b", re.I)
addressee_re = re.compile(r"^To \w+:\s*")
_REJECT = re.compile(r"check failed|fail|redo|please fix|send(?:ing)? it back|not ", re.I)


def _args(action: Action) -> str:
    return json.dumps(action.tool_args or {}, sort_keys=True)


def _numbers(text: str) -> list[str]:
    return _NUM.findall(text)


def _changed_numbers(wrong: str, right: str) -> set[str]:
    return set(_numbers(wrong)) - set(_numbers(right))


def _observed(history: Sequence[Step], tools: Sequence[str] | None = None) -> str:
    return "\n".join(
        s.content for s in history if s.kind == "observation" and (not tools or s.actor in tools)
    )


def _operators(text: str) -> list[str]:
    return [(a or b).upper() for a, b in _OPS.findall(text)]


def classify(wrong: Action, right: Action, history: Sequence[Step]) -> str | None:
    """The taxonomy mode id of `wrong` (corrected by `right`), or None if no rule fits."""
    approves = wrong.tool in FINISH or not _REJECT.search(wrong.content)
    rejects = right.tool is None and _REJECT.search(right.content)
    if wrong.actor in CHECKERS and approves and rejects:
        return "verification.false_approval"
    if wrong.tool != right.tool:
        return _other_tool(wrong, right)
    if wrong.tool is None:
        return _message(wrong, right, history)
    if "def " in _args(wrong) or wrong.tool == "write_code":
        return _code(wrong, right)
    if wrong.content == right.content and wrong.tool not in ("final_answer",):
        return "action.wrong_tool_argument"
    if wrong.tool in COMPUTE:
        return _computation(wrong, right, history)
    if wrong.tool == "final_answer":
        return _answer(wrong, right, history)
    if wrong.tool == "click":
        return "perception.misidentified_object"
    if wrong.tool in NAVIGATE:
        return "planning.wrong_subgoal"
    return None


def _other_tool(wrong: Action, right: Action) -> str | None:
    if wrong.tool is None:  # talking where the reference acts
        return "coordination.ignored_message"
    if wrong.content == right.content and right.tool is not None:
        return "action.wrong_tool"  # the intent stated is the reference's
    if wrong.tool in FINISH:
        return "planning.premature_finish"
    if right.tool is not None:
        return "action.wrong_tool"
    return None


def _code(wrong: Action, right: Action) -> str:
    """A copying slip (a line left out, digits swapped, a mistyped name) is an action
    error; a change of logic (a flipped test, an off-by-one) a reasoning one."""
    w, r = _args(wrong), _args(right)
    w_lines, r_lines = w.split("\\n"), r.split("\\n")
    if len(w_lines) != len(r_lines):
        return "action.wrong_tool_argument"
    names = set(re.findall(r"[A-Za-z_]\w*", w)) - set(re.findall(r"[A-Za-z_]\w*", r))
    changed = [(a, b) for a, b in zip(_numbers(w), _numbers(r), strict=False) if a != b]
    if names or any(sorted(a) == sorted(b) for a, b in changed):
        return "action.wrong_tool_argument"
    return "reasoning.logic_bug"


def _computation(wrong: Action, right: Action, history: Sequence[Step]) -> str:
    w, r = _args(wrong), _args(right)
    task = _numbers(history[0].content) if history else []
    w_ops, r_ops = _operators(w), _operators(r)
    operand_w, operand_r = _numbers(w)[-1:], _numbers(r)[-1:]
    if w_ops != r_ops and operand_w != operand_r and operand_w and operand_w[0] in task:
        return "planning.wrong_subgoal"  # another step of the task, done out of turn
    if w_ops != r_ops:
        return "reasoning.wrong_operator"
    if _numbers(w) != _numbers(r) and sorted(_numbers(w)) == sorted(_numbers(r)):
        return "reasoning.wrong_operator"  # the same operands the other way round: b - a
    changed = _changed_numbers(w, r)
    seen = _observed(history, PERCEPTION_TOOLS)
    if seen and changed and any(n in _numbers(r) for n in _numbers(seen)):
        return "perception.misread_value"
    if changed and wrong.content == right.content:
        return "action.wrong_tool_argument"
    return "reasoning.wrong_operand"


def _answer(wrong: Action, right: Action, history: Sequence[Step]) -> str | None:
    w = str((wrong.tool_args or {}).get("answer", ""))
    r = str((right.tool_args or {}).get("answer", ""))
    if wrong.content == right.content:
        return "action.wrong_tool_argument"
    observed = _observed(history)
    perceived = _observed(history, PERCEPTION_TOOLS)
    w_num, r_num = _numbers(w), _numbers(r)
    if w_num and r_num:
        wn, rn = w_num[-1], r_num[-1]
        if "detect_objects" in {s.actor for s in history} and abs(float(wn) - float(rn)) == 1:
            return "reasoning.miscount"
        shown = _numbers(observed)
        if _adjacent(wn, rn, history):
            return "perception.misread_value"  # the value printed next to the right one
        if wn in shown and (perceived or wn in _numbers(wrong.content)):
            return "perception.misidentified_object"  # a value that belongs to something else
        if rn in shown or perceived:
            return "perception.misread_value"  # the right value was there, carried wrongly
        return "reasoning.wrong_operand"
    if w and w.lower() in observed.lower():
        return "perception.misidentified_object"
    return "perception.misread_value" if perceived else None


def _adjacent(wrong: str, right: str, history: Sequence[Step]) -> bool:
    """`wrong` is printed right next to `right` in the latest observation (a neighbouring
    cell, bar or line read instead of the right one)."""
    last = next((s.content for s in reversed(history) if s.kind == "observation"), "")
    shown = _numbers(last)
    return any(
        (a == right and b == wrong) or (a == wrong and b == right)
        for a, b in itertools.pairwise(shown)
    )


_IMPERATIVE = re.compile(
    r"^(find|track|read|look|search|check|compute|work|select|buy|add|open|count|answer|"
    r"redo|please|report|use|take)\b",
    re.I,
)


def _sentences(text: str) -> list[str]:
    body = addressee_re.sub("", text, count=1)
    return [p.strip() for p in re.split(r"(?<=[.?!])\s+", body) if p.strip()]


def _message(wrong: Action, right: Action, history: Sequence[Step]) -> str:
    earlier = [s.content for s in history if s.actor == wrong.actor and s.kind == "message"]
    if wrong.content in earlier:
        return "coordination.ignored_message"
    to_w, to_r = addressee_re.match(wrong.content), addressee_re.match(right.content)
    if (to_w and to_w.group(0)) != (to_r and to_r.group(0)):
        return "planning.wrong_subgoal"  # handed to another agent: a different next step
    w_tokens, r_tokens = wrong.content.split(), right.content.split()
    if sorted(w_tokens) == sorted(r_tokens):
        return "perception.misidentified_object"  # the same facts, pinned on other objects
    w_s, r_s = _sentences(wrong.content), _sentences(right.content)
    changed = next((a for a, b in zip(w_s, r_s, strict=False) if a != b), w_s[-1] if w_s else "")
    return (
        "planning.wrong_subgoal"
        if _IMPERATIVE.match(changed)
        else ("coordination.distorted_handoff")
    )


def describe(wrong: Action, right: Action) -> str:
    """A one-line free-text account of the error (what clustering groups)."""
    if wrong.tool != right.tool:
        return (
            f"{wrong.actor} called {wrong.tool or 'a message'} where the reference calls "
            f"{right.tool or 'a message'}: {wrong.content[:120]}"
        )
    if wrong.tool is None:
        return f"{wrong.actor} said {wrong.content[:160]!r} instead of {right.content[:160]!r}"
    return (
        f"{wrong.actor} {wrong.tool} with {_args(wrong)[:120]} instead of {_args(right)[:120]}"
        + ("" if wrong.content == right.content else f"; stated: {wrong.content[:120]}")
    )
