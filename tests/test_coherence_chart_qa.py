"""An injected chart QA step must not contradict itself. `contradiction` reads ONE
step (its text, tool and arguments) and says what in it disagrees; it must pass every step
of the slip-free reference rollouts and every replacement the package's operators make, and
it must catch the step-only contradictions the audit found (so it is a real check)."""

from __future__ import annotations

import re

import pytest

from whowhen.benchmarks.chart_qa.actions import APPROVALS, NOTE, OVERVIEW, PLAN, parse_values
from whowhen.benchmarks.chart_qa.goals import conclude, goal_in
from whowhen.benchmarks.chart_qa.operators import OPERATORS
from whowhen.benchmarks.chart_qa.tasks import CITIES
from whowhen.runtime import Action

from .coherence_checks import direct_test, planned_test, reference_test

BENCHMARK = "chart_qa"
SYSTEMS = ("react", "orchestrator")
_TO = re.compile(r"^To (\w+): ")
_CALC = re.compile(r"(\w+) minus (\w+) is (-?\d+) - (-?\d+)\.$")
_CONCLUSION = re.compile(
    r"^(?P<lead>.+?) (?P<list>(?:[A-Z][a-z]+ -?\d+, )*[A-Z][a-z]+ -?\d+)\. (?P<sentence>.+?) "
    r"(?:The answer is|Proposed answer:) (?P<answer>\S+?)\.$"
)
_DIFF_ANSWER = re.compile(
    r"(?:^|\. )(\w+) is higher than (\w+) by (-?[\d.]+)\. The answer is (\S+?)\.$"
)
_DIFF_REPORT = re.compile(
    r"^(?:Question: .+?\? )?(\w+) (-?\d+) minus (\w+) (-?\d+) is (about )?(-?[\d.]+)\. "
    r"Proposed answer: (\S+?)\.$"
)
_APPROVAL = re.compile(
    "|".join("^" + re.escape(a).replace(re.escape("{answer}"), r"\S+?") + "$" for a in APPROVALS)
)
_CITY = re.compile(r"\b[A-Z][a-z]+\b")
_OVERVIEW = {o.split("{")[0] for o in OVERVIEW}
_COUNT = re.compile(r"(\d+) bars still to measure|leaves (\d+) to measure")


def _reading(text: str, part: object) -> str | None:
    """A read_chart call: its text announces the pass it makes (the overview, the last bar
    it names), and the bars it says are left start with the one it measures and number
    what it says."""
    if part == "axis":
        return "an axis read the policies never make"
    if part is None:
        return None if text.startswith(tuple(_OVERVIEW)) else "an overview not announced"
    named = [w for w in _CITY.findall(text) if w in CITIES]
    if not named or named[-1] != part:
        return f"the text moves to {named[-1] if named else 'no bar'}, the call measures {part}"
    listed = PLAN.search(text)
    if listed:
        todo = listed.group(1).split(", ")
        if todo[0] != part:
            return f"the text lists {todo[0]} next, the call measures {part}"
        count = _COUNT.search(text)
        if count and int(count.group(1) or count.group(2)) != len(todo):
            return f"the text counts {count.group(0)} but lists {len(todo)}"
    return None


_SAYS_ANSWER = re.compile(r"(?:The answer is|Final answer:) (\S+?)\.$")
_KINDS = {"highest value is": "max", "lowest value is": "min", "From left to right": "trend"}


def _conclusion(text: str) -> str | None:
    """What is wrong with a step that concludes from a value list (max, min or trend)."""
    m = _CONCLUSION.match(text)
    if m is None:
        return "a conclusion that is not in the policy's form"
    parsed = parse_values(f"{m['lead']} {m['list']}.")
    kind = next((k for phrase, k in _KINDS.items() if phrase in m["sentence"]), None)
    if parsed is None or kind is None:
        return "a conclusion that is not in the policy's form"
    asked = goal_in(text)
    if asked is not None and asked.kind != kind:
        return f"the step restates a {asked.kind} question but concludes a {kind} one"
    sentence, answer = conclude(kind, parsed[1])
    if m["sentence"] != sentence:
        return f"the values listed give {sentence!r}, the step says {m['sentence']!r}"
    if m["answer"] != answer:
        return f"the stated reasoning gives {answer}, the step answers {m['answer']}"
    return None


def _calculation(text: str, expression: str) -> str | None:
    """What is wrong with a difference step: the listed values, the stated computation and
    the expression sent must agree."""
    parsed, calc = parse_values(text), _CALC.search(text)
    if parsed is None or calc is None:
        return "a calculator call whose text states no computation from listed values"
    a, b, va, vb = calc.groups()
    values = dict(parsed[1])
    for name, stated in ((a, va), (b, vb)):
        if name not in values:
            return f"{name} is computed with but not listed"
        if values[name] != int(stated):
            return f"{name} is listed at {values[name]} but computed with as {stated}"
    if expression != f"({va} - {vb})":
        return f"the text computes {va} - {vb}, the call sends {expression}"
    return None


def contradiction(action: Action) -> str | None:
    """What in this one step contradicts itself (None: nothing), from its text, tool and
    arguments alone: the tool it calls against the one its text announces, the values its
    text lists against those it computes with or concludes from, the answer its text gives
    against the one it submits; a text the policies never write is flagged too."""
    text = _TO.sub("", action.content)
    args = action.tool_args or {}
    note, listed = NOTE.match(text), parse_values(text)
    if note and listed:
        name, value = (v for v in note.groupdict().values() if v)
        if dict(listed[1]).get(name, int(value)) != int(value):
            return f"the text notes {name} at {value} and lists it at {dict(listed[1])[name]}"
    if action.tool == "read_chart":
        return _reading(text, args.get("part"))
    if bool(_CALC.search(text)) != (action.tool == "calculator"):
        return f"the text and the tool disagree ({action.tool} called)"
    if action.tool == "calculator":
        return _calculation(text, str(args.get("expression", "")))
    if action.tool == "final_answer":
        said = _SAYS_ANSWER.search(text)
        if said is None:
            return "a final answer whose text gives no answer"
        if str(args.get("answer")) != said.group(1):
            return f"the text answers {said.group(1)}, the call submits {args.get('answer')}"
        if _APPROVAL.match(text):
            return None
        diff = _DIFF_ANSWER.search(text)
        if diff:
            if diff[3] != diff[4]:
                return "the stated difference is not the answer"
            stated = re.findall(r"-?\d+(?:\.\d+)?", text[: diff.start()])
            if any(n != diff[3] for n in stated):
                return f"the text reports the result {stated}, the step answers {diff[3]}"
            return None
        return _conclusion(text)
    if action.tool is not None:
        return None
    report = _DIFF_REPORT.match(text)
    if report:
        a_value, b_value, result, proposed = report[2], report[4], report[6], report[7]
        exact = int(a_value) - int(b_value)
        if report[5]:  # an estimate: the values rounded to tens
            guess = round(int(a_value), -1) - round(int(b_value), -1)
            if float(result) != guess:
                return f"{a_value} - {b_value} is not about {result}"
        elif float(result) != exact:
            return f"{a_value} - {b_value} is not {result}"
        return None if proposed == result else f"{result} computed, {proposed} proposed"
    if "Proposed answer:" in text:
        return _conclusion(text)
    return None


test_no_reference_step_is_flagged = reference_test(BENCHMARK, SYSTEMS, contradiction)
test_no_planned_replacement_is_flagged = planned_test(BENCHMARK, SYSTEMS, OPERATORS, contradiction)
test_no_operator_output_is_flagged = direct_test(BENCHMARK, SYSTEMS, OPERATORS, contradiction)


LIST = "Split 68, Porto 18, Bern 53"
CONTRADICTORY = [
    # the stated difference is right, the expression sent is not
    Action(
        "assistant",
        f"The chart reads {LIST}. Split minus Porto is 68 - 18.",
        "calculator",
        {"expression": "(86 - 18)"},
    ),
    # the computation uses a value other than the one listed
    Action(
        "assistant",
        f"The chart reads {LIST}. Split minus Porto is 86 - 18.",
        "calculator",
        {"expression": "(86 - 18)"},
    ),
    # the text answers one thing, the call submits another
    Action(
        "assistant",
        "Split is higher than Porto by 50. The answer is 50.",
        "final_answer",
        {"answer": "05"},
    ),
    Action(
        "assistant",
        f"The chart reads {LIST}. The highest value is Split's 68. The answer is Split.",
        "final_answer",
        {"answer": "Bern"},
    ),
    # the conclusion does not follow from the values listed in the same step
    Action(
        "assistant",
        f"The chart reads {LIST}. The highest value is Bern's 53. The answer is Bern.",
        "final_answer",
        {"answer": "Bern"},
    ),
    Action(
        "analyst",
        f"To orchestrator: The reported values are {LIST}. The lowest value is "
        "Porto's 18. Proposed answer: Split.",
    ),
    Action("analyst", "To orchestrator: Split 68 minus Porto 18 is 68. Proposed answer: 68."),
    # an unargued finish in a form the policy never writes
    Action(
        "assistant",
        f"The chart reads {LIST}. The value for Split is 68. The answer is 68.",
        "final_answer",
        {"answer": "68"},
    ),
    # the calculator's result stated, another difference answered
    Action(
        "assistant",
        "The calculator gives 50. Split is higher than Porto by 68. The answer is 68.",
        "final_answer",
        {"answer": "68"},
    ),
    # the text announces one tool, another is called
    Action("assistant", OVERVIEW[0].format(ymax=100), "final_answer", {"answer": "Split"}),
    # the text moves on to one bar, the call measures another
    Action("assistant", "Bar Porto reads 18. Next, Split.", "read_chart", {"part": "Porto"}),
    # the text moves on to a bar, the call reads the whole chart
    Action("assistant", "Bar Porto reads 18. Next, Split.", "read_chart", {}),
    # the bars said to be left do not start with the one measured, or are miscounted
    Action(
        "assistant",
        "Bar Porto reads 18. Still to measure: Bern, Split. Next, Split.",
        "read_chart",
        {"part": "Split"},
    ),
    Action(
        "reader",
        "Bar Porto reads 18. That leaves 3 to measure: Split, Bern. Next, Split.",
        "read_chart",
        {"part": "Split"},
    ),
    # the note on the last bar read and the list disagree on it
    Action(
        "assistant",
        f"Bar Split reads 86. Every bar I need is measured. The chart reads {LIST}. "
        "Split minus Porto is 68 - 18.",
        "calculator",
        {"expression": "(68 - 18)"},
    ),
    # the question restated is not the one the conclusion answers
    Action(
        "analyst",
        f"To orchestrator: Question: Which city has the lowest value? The reported values are "
        f"{LIST}. The highest value is Split's 68. Proposed answer: Split.",
    ),
    Action(
        "assistant",
        f"The chart reads {LIST}. Split minus Porto is 68 - 18.",
        "final_answer",
        {"answer": "50"},
    ),
]


@pytest.mark.parametrize("action", CONTRADICTORY, ids=range(len(CONTRADICTORY)))
def test_the_check_flags_a_contradictory_step(action: Action) -> None:
    assert contradiction(action)
