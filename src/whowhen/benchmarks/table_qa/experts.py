"""The expert group chat on table QA: a data-analysis chat shaped like the AG2 group chats
that Who&When's Algorithm-Generated runs come from.

The DataAnalysis_Expert states the plan (the target: aggregate, measure, product, region,
month). The Python_Expert writes programs over the table's CSV file, each run by the
`Computer_terminal` (an observation, as AG2's executor prints it): on some tasks a look
at the columns, a listing of the matching rows (on some tasks it first writes `Region`
for `region`, the terminal reports the KeyError, and it fixes the program), at times a
report to the DataAnalysis_Expert, who confirms the target, then the aggregate, and it
proposes the value. On most tasks that ask for a total or an average its first aggregate forgets the
month filter. The Verification_Expert reads the aggregate's program: one without a month
filter is sent back. On some tasks it then recomputes the value its own way and sends a
disagreeing proposal back; it approves with the value and TERMINATE.

Every step takes the target from the most recent step that stated it (`expert_forms.
believed`), never from the question again, and the verifier checks the proposal against
its own statement, not against the question: a wrong month or aggregate stated and
computed gets through, as in many recorded chats.
"""

from __future__ import annotations

from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.scripted import ScriptedExpertChat
from whowhen.benchmarks.table_qa.expert_forms import (
    ACK,
    AGG,
    ANALYST,
    APPROVE,
    ASK,
    CHECK,
    CHECKER,
    CHECKIN,
    CODER,
    FIX,
    LIST,
    MISMATCH,
    NO_MONTH,
    PEEK,
    PEEK_CODE,
    PLAN,
    PROPOSE,
    REDO,
    SENDS_BACK,
    Target,
    agg_code,
    believed,
    check_code,
    filters_month,
    list_code,
    listed,
    printed_number,
    program_kind,
    target_of,
)
from whowhen.runtime import Action, Step
from whowhen.tools import (
    TERMINAL,
    code_of,
    failed,
    last_agent,
    output_after,
    program,
    programs,
    said,
)

BROAD = 0.7
"""How often the first total or average forgets the month filter (sent back: a recovery)."""
WRONG_COLUMN = 0.3
"""How often the first listing writes `Region` (a KeyError the expert fixes)."""
CHECKIN_P = 0.5
PEEK_P = 0.5
"""How often the expert looks at the file's columns before filtering (a program less on
the other tasks: every program is a sandboxed process)."""
CAREFUL = 0.5
"""How often the verifier recomputes the value before approving (a per-task draw)."""


def sent_back_at(history: Sequence[Step]) -> int:
    """Index of the verifier's last send-back (0 if none): the expert starts over there."""
    for step in reversed(history):
        if step.actor == CHECKER and step.tool is None and _sends_back(step):
            return step.step
    return 0


def _sends_back(step: Step | Action) -> bool:
    return any(form.fields(said(step)) is not None for form in SENDS_BACK)


def last_proposal(history: Sequence[Step]) -> tuple[Step, dict[str, str]] | None:
    for step in reversed(history):
        if step.actor == CODER and step.tool is None:
            fields = PROPOSE.fields(step.content)
            if fields is not None:
                return step, fields
    return None


def approval(history: Sequence[Step], t: Target, value: str, end: str) -> Action:
    text = APPROVE.say(history, **t.fields(), value=value)
    return Action(CHECKER, f"{text}{end}", "final_answer", {"answer": value})


class ExpertChatSystem(ScriptedExpertChat):
    agents = (ANALYST, CODER, CHECKER)
    end = "\n\nTERMINATE"

    def speaker(self, history: Sequence[Step]) -> str:
        last = last_agent(history)
        if last is None:
            return ANALYST
        if last.tool == TERMINAL:  # the expert who ran the program reads its output
            return last.actor
        if last.actor == CODER:
            return ANALYST if CHECKIN.fields(last.content) is not None else CHECKER
        return CODER

    def speak(self, who: str, history: Sequence[Step]) -> Action:
        if who == ANALYST:
            t = believed(history)
            if last_agent(history, ANALYST) is None:
                return Action(ANALYST, PLAN.say(history, **t.fields()))
            return Action(ANALYST, ACK.say(history, **t.fields()))
        if who == CHECKER:
            return self._verify(history)
        return self._compute(history)

    def _compute(self, history: Sequence[Step]) -> Action:
        t = believed(history)
        since = sent_back_at(history)
        mine = programs(history, CODER)
        if not mine and phrasing.task_chance(history, "tq.expert.peek", PEEK_P):
            return program(CODER, PEEK.say(history), PEEK_CODE)
        last = mine[-1] if mine else None
        out = output_after(history, last) if last is not None else ""
        kind = program_kind(code_of(last)) if last is not None else ""
        if kind == "list" and failed(out):  # the KeyError: fix the column name
            return program(CODER, FIX.say(history, **t.fields(), column="region"), list_code(t))
        if not any(program_kind(code_of(s)) == "list" and not failed(output_after(history, s))
                   for s in mine):  # fmt: skip
            wrong = phrasing.task_chance(history, "tq.expert.column", WRONG_COLUMN)
            column = "Region" if wrong and kind != "list" else "region"
            return program(CODER, LIST.say(history, **t.fields()), list_code(t, column))
        newest = last_agent(history, CODER)
        if kind == "list" and newest is last and not since:
            n = len(listed(out))
            if phrasing.task_chance(history, "tq.expert.checkin", CHECKIN_P):
                return Action(CODER, CHECKIN.say(history, **t.fields(), n=n))
        aggs = [s for s in programs(history, CODER, since) if program_kind(code_of(s)) == "agg"]
        if not aggs:
            if since:
                return program(CODER, REDO.say(history, **t.fields()), agg_code(t))
            broad = t.agg in ("total", "average") and phrasing.task_chance(
                history, "tq.expert.broad", BROAD
            )
            return program(CODER, AGG.say(history, **t.fields()), agg_code(t, month=not broad))
        value = printed_number(output_after(history, aggs[-1])) or "0"
        return Action(CODER, PROPOSE.say(history, **t.fields(), value=value))

    def _verify(self, history: Sequence[Step]) -> Action:
        found = last_proposal(history)
        if found is None:  # nothing proposed: ask for the value
            return Action(CHECKER, ASK.say(history, **believed(history).fields()))
        proposal, fields = found
        t, value = target_of(fields, believed(history)), fields["value"]
        mine = programs(history, CHECKER, proposal.step)
        checks = [s for s in mine if program_kind(code_of(s)) == "check"]
        if checks:
            check = printed_number(output_after(history, checks[-1]))
            if check and abs(float(check) - float(value)) <= 0.011:
                return approval(history, t, value, self.end)
            fields = {**t.fields(), "value": value, "check": check or "nothing"}
            return Action(CHECKER, MISMATCH.say(history, **fields))
        since = sent_back_at(history)
        aggs = [
            s
            for s in programs(history, CODER, since)
            if s.step < proposal.step and program_kind(code_of(s)) == "agg"
        ]
        if aggs and not filters_month(code_of(aggs[-1])):
            return Action(CHECKER, NO_MONTH.say(history, **t.fields()))
        if phrasing.task_chance(history, "tq.expert.careful", CAREFUL):
            return program(CHECKER, CHECK.say(history, **t.fields()), check_code(t))
        return approval(history, t, value, self.end)
