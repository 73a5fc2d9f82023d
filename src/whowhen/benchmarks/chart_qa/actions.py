"""The chart QA policies' messages and actions: templates, builders and the parsers that
read them back."""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.benchmarks.chart_qa.goals import Goal, conclude
from whowhen.benchmarks.chart_qa.tasks import format_values
from whowhen.runtime import Action, Step

Values = list[tuple[str, int]]
CHART_LEAD = "The chart reads"  # values the agent itself read off the chart
REPORTED_LEAD = "The reported values are"  # values the analyst got from the orchestrator
HANDOFF_LEAD = "The reader reports"  # values the orchestrator passes on
TOOL_LEAD = "Bars read from the image, left to right:"  # read_chart's observation
_LIST = r"((?:[A-Z][a-z]+ \d+, )*[A-Z][a-z]+ \d+)"
_LISTED = re.compile(rf"({CHART_LEAD}|{REPORTED_LEAD}|{HANDOFF_LEAD}|{TOOL_LEAD}) {_LIST}\.")
_CALC = re.compile(r"(\w+) minus (\w+) is (\d+) - (\d+)\.")
EXPR = re.compile(r"^\((\d+) - (\d+)\)$")
DIFF_REPORT = re.compile(
    r"(?:^|[?.] )(\w+) (\d+) minus (\w+) (\d+) is (?:about )?(-?[\d.]+)\. "
    r"Proposed answer: (\S+?)\.$"
)
PROPOSED = re.compile(r"Proposed answer: (\S+?)\.$")
_REJECTED = re.compile(r"^To orchestrator: Check failed: ")
# --- the policies' wording ---------------------------------------------------------------


def parse_values(text: str) -> tuple[str, Values] | None:
    """(lead phrase, values) of the first value list in a step's text."""
    m = _LISTED.search(text)
    if not m:
        return None
    pairs = [item.rsplit(" ", 1) for item in m.group(2).split(", ")]
    return m.group(1), [(name, int(value)) for name, value in pairs]


def parse_calc(text: str) -> tuple[str, str, str, str] | None:
    """(a, b, stated va, stated vb) of a difference step's text `a minus b is va - vb.`"""
    m = _CALC.search(text)
    return (m.group(1), m.group(2), m.group(3), m.group(4)) if m else None


def calc_action(
    actor: str,
    lead: str,
    values: Values,
    a: str,
    b: str,
    expr: str | None = None,
    pre: str = "",
) -> Action:
    """A difference step: the values, the stated computation and the expression sent
    (`expr` differs from the stated one only for an action error).

    The expression is parenthesised: the arithmetic benchmark's calculator operators rewrite a
    bare `a - b` into their own "running total" wording, which would read as a marker here."""
    by_name = dict(values)
    va, vb = by_name[a], by_name[b]
    return Action(
        actor,
        f"{pre}{lead} {format_values(values)}. {a} minus {b} is {va} - {vb}.",
        "calculator",
        {"expression": expr or f"({va} - {vb})"},
    )


def answer_action(actor: str, lead: str, values: Values, goal: Goal | str, pre: str = "") -> Action:
    """A max, min or trend answer: the values, the reasoning sentence, the answer."""
    sentence, answer = conclude(goal, values)
    return Action(
        actor,
        f"{pre}{lead} {format_values(values)}. {sentence} The answer is {answer}.",
        "final_answer",
        {"answer": answer},
    )


def diff_answer_action(actor: str, a: str, b: str, result: str, pre: str = "") -> Action:
    return Action(
        actor,
        f"{pre}{a} is higher than {b} by {result}. The answer is {result}.",
        "final_answer",
        {"answer": result},
    )


APPROVALS = (
    "The analyst's answer agrees with the reader's values. Final answer: {answer}.",
    "I recomputed it from the reader's values and get the same. Final answer: {answer}.",
    "Checked against the reader's report: the proposal holds. Final answer: {answer}.",
)


def approval_action(answer: str, history: Sequence[Step] = ()) -> Action:
    """The verifier's approval: the analyst's proposed answer becomes the final answer."""
    text = phrasing.phrase(history, "cq.approve", APPROVALS, answer=answer)
    return Action("verifier", text, "final_answer", {"answer": answer})


def preamble(text: str) -> str:
    """What a step says before its value list (the drawn framing sentence), kept by the
    operators so a rewritten step keeps the policy's wording."""
    body = re.sub(r"^To \w+: ", "", text)
    m = _LISTED.search(body)
    return body[: m.start()] if m else ""


# --- the reading passes' wording ---------------------------------------------------------

OVERVIEW = (
    "The y axis runs from 0 to {ymax} as the task says. First one pass over the whole chart.",
    "I'll start with a first reading of all the bars together (the scale is 0 to {ymax}).",
    "With the scale at 0 to {ymax}, I'll read the whole chart once for an overview.",
)
FIRST_BAR = (
    "The overview gives {n} bars. A single pass can misplace a bar, so I'll measure the "
    "ones I need one at a time, in this order: {plan}. Starting with {name}.",
    "{n} bars in the overview. To be careful I will measure the bars I need individually, "
    "in this order: {plan}. First {name}.",
    "Overview done ({n} bars). Now bar by bar, in this order: {plan}. Beginning with {name}.",
)
FIRST_PAIR = (
    "The question names two bars, so I'll measure just those one at a time, in this order: "
    "{plan}. Starting with {name}.",
    "Only two bars matter here; I will measure them individually, in this order: {plan}. "
    "First {name}.",
    "Two bars to read, in this order: {plan}. Beginning with {name}.",
)
PLAN = re.compile(r"(?:in this order|to measure): ((?:[A-Z][a-z]+, )*[A-Z][a-z]+)\.")
"""The bars still to measure as a reading step states them (its plan, or what is left):
the next steps measure what the latest statement lists."""
BAR_NOTE = (
    "Bar {name} reads {value}.",
    "Measured {name} at {value}.",
    "The {name} bar comes out at {value}.",
)
NOTE = re.compile(
    "|".join(
        "^"
        + re.escape(v)
        .replace(re.escape("{name}"), f"(?P<n{i}>[A-Z][a-z]+)")
        .replace(re.escape("{value}"), f"(?P<v{i}>\\d+)")
        for i, v in enumerate(BAR_NOTE)
    )
)
"""A step's opening note on the last bar it read (each step starts with a template word,
never a name, so a kind of step is its template)."""
NEXT_BAR = ("Next, {name}.", "Now {name}.", "On to {name}.")
LEFT = (
    "{left} bars still to measure: {rest}.",
    "That leaves {left} to measure: {rest}.",
    "Still to measure: {rest}.",
)
CLOSE = (
    "A close call: {name} ({value}) and {other} ({other_value}) are within {gap}, too close "
    "to trust one reading, so I'll measure {name} again.",
    "Too close to call: {name} at {value} against {other} at {other_value}; a second "
    "measurement of {name} will settle it.",
    "Only {gap} separate {name} ({value}) and {other} ({other_value}). Re-measuring {name}.",
)
SAME = (
    "The second measurement of {name} agrees.",
    "Again {name} reads the same.",
    "Re-measured: {name} is unchanged.",
)
DONE = (
    "Every bar I need is measured.",
    "That was the last bar to measure.",
    "The readings are complete.",
)
CHECK = (
    "Before answering I'll check the margin that decides it. ",
    "A quick check of the two bars the answer turns on. ",
    "Let me compute the gap that settles the answer. ",
)


# --- the orchestrator's messages ------------------------------------------------------

RESULT = (
    "The calculator gives {result}.",
    "That subtraction comes to {result}.",
    "{result} is what the calculator returns.",
)
ORDER_READ = (
    "Please read the bar values off the chart with read_chart and report them. The "
    "question: {question}",
    "Reader, please measure the chart and report the values we need for this question: {question}",
    "First we need the data. Please read the chart and send me the bar values for: {question}",
)
HANDOFF = (
    "Please answer: {question}",
    "Using these values, please answer: {question}",
    "Work from these values only and answer: {question}",
)
TO_VERIFIER = (
    "The analyst has proposed an answer. Please check it against the reader's values. The "
    "question was: {question}",
    "We have a proposal from the analyst; please check it against the reader's values. "
    "Question: {question}",
    "Please check the analyst's proposal against the reader's values before we finish. It "
    "answers: {question}",
)
ORDER_REMEASURE = (
    "The verifier asks for a second look: please measure {a} and {b} again and report. "
    "(Question: {question})",
    "Please measure {a} and {b} again; the verifier wants to be sure of them for: {question}",
    "One more pass for the verifier: measure {a} and {b} again and send the values. We are "
    "answering: {question}",
)
TO_VERIFIER_AGAIN = (
    "The reader has measured {a} and {b} again. Please check the proposal once more. "
    "Question: {question}",
    "Second measurement done for {a} and {b}. Please check the analyst's answer again for: "
    "{question}",
    "The reader re-measured {a} and {b}; over to you for the final check of: {question}",
)
VERIFY_REMEASURE = (
    "Before I approve: {a} ({va}) and {b} ({vb}) decide the answer; please have the reader "
    "measure {a} and {b} again. The question: {question}",
    "The answer turns on {a} and {b} ({va} against {vb}). To be safe, please have the "
    "reader measure {a} and {b} again. We are answering: {question}",
    "The proposal looks right, but it hinges on {a} ({va}) and {b} ({vb}); please have the "
    "reader measure {a} and {b} again before I sign off on: {question}",
)
REPORT = (
    "All bars I was asked for are measured. ",
    "Here are my single-bar measurements. ",
    "Done reading. ",
)
REPORT_AGAIN = (
    "I measured {a} and {b} again{change}. ",
    "Second measurement of {a} and {b} done{change}. ",
    "Re-measured {a} and {b}{change}. ",
)
