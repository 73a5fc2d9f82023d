"""The chart QA policies' messages and actions: templates, builders and the parsers that
read them back."""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.benchmarks.chart_qa.tasks import format_values, trend_of
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
    r"(\w+) (\d+) minus (\w+) (\d+) is (-?[\d.]+)\. Proposed answer: (\S+?)\.$"
)
PROPOSED = re.compile(r"Proposed answer: (\S+?)\.$")
_REJECTED = re.compile(r"^To orchestrator: Check failed: ")
_SENTENCES = {
    "rise": "From left to right every value is higher than the one before, so they rise.",
    "fall": "From left to right every value is lower than the one before, so they fall.",
    "neither": "From left to right the values go both up and down, so neither.",
}


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


def conclude(kind: str, values: Values) -> tuple[str, str]:
    """(the reasoning sentence, the answer) for a max, min or trend question."""
    if kind == "trend":
        word = trend_of([v for _, v in values])
        return _SENTENCES[word], word
    pick = max if kind == "max" else min
    name, value = pick(values, key=lambda item: item[1])
    return f"The {'highest' if kind == 'max' else 'lowest'} value is {name}'s {value}.", name


def kind_of(text: str) -> str | None:
    """The question kind a step's stated conclusion answers (None: no conclusion)."""
    if "highest value is" in text:
        return "max"
    if "lowest value is" in text:
        return "min"
    return "trend" if any(s in text for s in _SENTENCES.values()) else None


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


def answer_action(actor: str, lead: str, values: Values, kind: str, pre: str = "") -> Action:
    sentence, answer = conclude(kind, values)
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

AXIS = (
    "Before measuring bars I'll check the axis scale.",
    "First the axis: the bar heights only mean something against its scale.",
    "Let me start with the y axis and its ticks, then the bars.",
)
OVERVIEW = (
    "The scale is 0 to {ymax} as the task says. Now one pass over the whole chart.",
    "Axis confirmed (0 to {ymax}). Next, a first reading of all the bars together.",
    "With the scale at 0 to {ymax}, I'll read the whole chart once for an overview.",
)
FIRST_BAR = (
    "The overview gives {n} bars. A single pass can misplace a bar, so I'll measure the "
    "ones that matter one at a time, starting with {name}.",
    "{n} bars in the overview. To be careful I will measure the bars I need individually; "
    "first {name}.",
    "Overview done ({n} bars). Now bar by bar, beginning with {name}.",
)
BAR_NOTE = ("{name} reads {value}.", "{name} measures {value}.", "{name} comes out at {value}.")
NEXT_BAR = ("Next, {name}.", "Now {name}.", "On to {name}.")
LEFT = ("{left} bars to go.", "That leaves {left} to measure.", "")
CLOSE = (
    "{name} ({value}) and {other} ({other_value}) are within {gap}, too close to trust one "
    "reading, so I'll measure {name} again.",
    "{name} at {value} is close to {other} at {other_value}; a second measurement of {name} "
    "will settle it.",
    "Only {gap} separate {name} ({value}) and {other} ({other_value}). Re-measuring {name}.",
)
SAME = (
    "The second measurement of {name} agrees.",
    "{name} again reads the same.",
    "Re-measured: {name} is unchanged.",
)
DONE = (
    "Every bar I need is measured.",
    "That was the last bar to measure.",
    "The readings are complete.",
)


# --- the orchestrator's messages ------------------------------------------------------

RESULT = (
    "The calculator gives {result}.",
    "That subtraction comes to {result}.",
    "{result} is what the calculator returns.",
)
ORDER_READ = (
    "Please read the bar values off the chart with read_chart and report them.",
    "Reader, please measure the chart: the axis, then the bars, and report every value.",
    "First we need the data. Please read the chart and send me the bar values.",
)
HANDOFF = (
    "Please answer: {question}",
    "Using these values, please answer: {question}",
    "Work from these values only and answer: {question}",
)
TO_VERIFIER = (
    "The analyst has proposed an answer. Please check it against the reader's values.",
    "We have a proposal from the analyst; please check it against the reader's values.",
    "Please check the analyst's proposal against the reader's values before we finish.",
)
ORDER_REMEASURE = (
    "The verifier asks for a second look: please measure {a} and {b} again and report.",
    "Please measure {a} and {b} again; the verifier wants to be sure of them.",
    "One more pass for the verifier: measure {a} and {b} again and send the values.",
)
TO_VERIFIER_AGAIN = (
    "The reader has measured {a} and {b} again. Please check the proposal once more.",
    "Second measurement done for {a} and {b}. Please check the analyst's answer again.",
    "The reader re-measured {a} and {b}; over to you for the final check.",
)
VERIFY_REMEASURE = (
    "Before I approve: {a} ({va}) and {b} ({vb}) decide the answer; please have the reader "
    "measure {a} and {b} again.",
    "{a} and {b} are what the answer turns on ({va} against {vb}). To be safe, please have "
    "the reader measure {a} and {b} again.",
    "The proposal looks right, but it hinges on {a} ({va}) and {b} ({vb}); please have the "
    "reader measure {a} and {b} again before I sign off.",
)
REPORT = (
    "All bars I was asked for are measured. ",
    "Here are my readings, with the single-bar measurements put in. ",
    "Done reading. ",
)
REPORT_AGAIN = (
    "I measured {a} and {b} again{change}. ",
    "Second measurement of {a} and {b} done{change}. ",
    "Re-measured {a} and {b}{change}. ",
)
