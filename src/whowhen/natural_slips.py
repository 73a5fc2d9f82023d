"""The natural slip generator: how the scripted agents err on their own, apart from the
injection operators.

Why apart: if natural failures came from the operator table that writes the injected
errors, the natural-failure taxonomy and the injected dataset would share one wording and
one placement by construction, and comparing them would say nothing. These slips know no
benchmark: they read only the action about to be taken and the visible history, and each
has its own precondition (where it can happen) and wording:

- a stale value: a number the action takes from the latest observation is taken from an
  older one instead (the agent carries an earlier result forward);
- a stale name: a name the action takes from the latest observation is swapped for
  another name of the same shape from the recent observations (the wrong entity);
- a neighbouring value: a number the action takes from the latest observation is swapped
  for the number printed next to it there (the wrong cell, bar or line read);
- an off-by-one count: an integer answer that no observation shows (the agent counted or
  computed it) is one off;
- a rounded value: a long number in a tool argument is rounded, and believed;
- an early answer: a lone agent stops and answers with the last number it saw;
- a repeated request: an agent re-sends its earlier message to an agent that has answered
  it since, as if the answer had not come;
- a neighbouring choice: a word the action picks from a list the latest observation shows
  (an option among `colour (navy, teal)`) is swapped for its neighbour there.

Each changes the step's text and action together, so a slip reads as a decision, not as a
step that contradicts itself.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence

from whowhen.runtime import Action, Step
from whowhen.slips import NUMBER

NaturalSlip = Callable[[Action, random.Random, Sequence[Step]], tuple[str, Action] | None]

COMPUTE = ("calculator", "sql", "run_python")
FINISH = ("final_answer", "checkout")
_TO = re.compile(r"^To (\w+):")


def _numbers(text: str) -> list[str]:
    return NUMBER.findall(text)


def _swap_number(action: Action, old: str, new: str) -> Action:
    """`action` with every stand-alone occurrence of the number `old` (text and arguments)
    replaced by `new`."""
    pattern = re.compile(rf"(?<![\w.]){re.escape(old)}(?![\w]|\.\d)")
    args = action.tool_args
    if args is not None:
        args = json.loads(pattern.sub(lambda _: new, json.dumps(args)))
    return Action(action.actor, pattern.sub(lambda _: new, action.content), action.tool, args)


def _argument_numbers(action: Action) -> list[str]:
    return _numbers(json.dumps(action.tool_args)) if action.tool_args else []


def stale_value(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> tuple[str, Action] | None:
    """A number the action takes from the latest observation is replaced, in its text and
    arguments, by one only an older observation showed."""
    observations = [s for s in history if s.kind == "observation"]
    if len(observations) < 2:
        return None
    latest = set(_numbers(observations[-1].content))
    used = list(dict.fromkeys(_argument_numbers(action) or _numbers(action.content)))
    fresh = [n for n in used if n in latest]
    older = [
        n for s in observations[-4:-1] for n in _numbers(s.content) if n not in latest and n != "0"
    ]
    if not fresh or not older:
        return None
    old, new = rng.choice(fresh), older[-1]
    if action.tool in COMPUTE:
        mode = "reasoning.wrong_operand"
    elif action.tool is None:
        mode = "coordination.distorted_handoff"
    else:
        mode = "perception.misidentified_object"  # a value that belongs to an earlier result
    return mode, _swap_number(action, old, new)


def neighbouring_value(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> tuple[str, Action] | None:
    """A number the action takes from the latest observation is replaced, in its text and
    arguments, by the number printed next to it in that observation."""
    observations = [s for s in history if s.kind == "observation"]
    if not observations:
        return None
    shown = _numbers(observations[-1].content)
    used = [n for n in dict.fromkeys(_argument_numbers(action) or _numbers(action.content))]
    options = [
        (n, shown[j])
        for n in used
        for i, m in enumerate(shown)
        if m == n
        for j in (i - 1, i + 1)
        if 0 <= j < len(shown) and shown[j] != n and shown[j] not in used
    ]
    if not options:
        return None
    old, new = rng.choice(options)
    mode = "reasoning.wrong_operand" if action.tool in COMPUTE else "perception.misread_value"
    return mode, _swap_number(action, old, new)


def off_by_one(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> tuple[str, Action] | None:
    """An integer final answer that no observation shows is off by one, in the text too."""
    answer = str((action.tool_args or {}).get("answer", ""))
    if action.tool != "final_answer" or not answer.isdigit() or int(answer) < 2:
        return None
    if any(answer in _numbers(s.content) for s in history if s.kind == "observation"):
        return None
    new = str(int(answer) + rng.choice((-1, 1)))
    return "reasoning.miscount", _swap_number(action, answer, new)


_NAME = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*\b")


NAVIGATE = ("read", "search", "click", "sample_frames", "detect_objects")
_COMMON = frozenset(
    (
        "The", "This", "That", "These", "There", "It", "A", "An", "I", "We", "You", "He",
        "She", "They", "No", "Yes", "Not", "Results", "Result", "Page", "Error", "Found",
        "None", "Total", "Answer", "Question", "Task", "Step", "Next", "Item", "Items",
    )
)  # fmt: skip


def _names(text: str) -> list[str]:
    """Capitalised names in `text`, without labels (a word before a colon, as in
    `Results:`) or common sentence openers."""
    return [
        m.group(0)
        for m in _NAME.finditer(text)
        if text[m.end() : m.end() + 1] != ":" and m.group(0) not in _COMMON
    ]


def stale_name(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> tuple[str, Action] | None:
    """A name (capitalised words) the action takes from the latest observation is replaced,
    in its text and arguments, by another name of as many words from the recent ones."""
    observations = [s for s in history if s.kind == "observation"]
    args = action.tool_args or {}
    if not observations or any("\n" in str(v) for v in args.values()):
        return None  # code and multi-line text: not a name carried over
    latest = set(_names(observations[-1].content))
    where = json.dumps(action.tool_args) if action.tool_args else action.content
    used = [n for n in dict.fromkeys(_names(where)) if n in latest and len(n) > 3]
    if not used:
        return None
    old = rng.choice(used)
    width = len(old.split())
    pool = [
        n
        for s in observations[-3:]
        for n in dict.fromkeys(_names(s.content))
        if n != old and len(n.split()) == width and n not in action.content and len(n) > 3
    ]
    if not pool:
        return None
    new = rng.choice(pool)
    pattern = re.compile(rf"\b{re.escape(old)}\b")
    if action.tool_args is not None:
        args = json.loads(pattern.sub(lambda _: new, json.dumps(action.tool_args)))
    slipped = Action(
        action.actor,
        pattern.sub(lambda _: new, action.content),
        action.tool,
        action.tool_args and args,
    )
    if action.tool is None:
        mode = "coordination.distorted_handoff"
    elif action.tool in NAVIGATE:
        mode = "planning.wrong_subgoal"  # looking into an entity the task does not need
    else:
        mode = "perception.misidentified_object"
    return mode, slipped


def rounded_value(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> tuple[str, Action] | None:
    """A number of four or more digits in a tool argument, rounded to two significant
    digits, in the text as well: the agent works with the rounded value."""
    long = [n for n in _argument_numbers(action) if len(n.lstrip("-").replace(".", "")) >= 4]
    if action.tool is None or action.tool in FINISH or not long:
        return None
    old = rng.choice(long)
    value = float(old)
    digits = len(str(int(abs(value)))) - 2
    rounded = round(value, -digits) if digits > 0 else round(value, 1)
    new = str(int(rounded)) if float(rounded).is_integer() else str(rounded)
    if new == old:
        return None
    return "action.wrong_tool_argument", _swap_number(action, old, new)


EARLY = (
    "That looks like the result already, so I will stop here: {n}.",
    "I think {n} answers the question; no need to go further.",
    "{n} it is. I am confident enough to answer now.",
)


def early_answer(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> tuple[str, Action] | None:
    """A lone agent, after at least two tool results and before it is done, answers with
    the last number the latest observation shows."""
    if action.actor != "assistant" or action.tool in (None, *FINISH):
        return None
    observations = [s for s in history if s.kind == "observation"]
    numbers = _numbers(observations[-1].content) if len(observations) >= 2 else []
    if not numbers:
        return None
    n = numbers[-1]
    text = rng.choice(EARLY).format(n=n)
    return "planning.premature_finish", Action(action.actor, text, "final_answer", {"answer": n})


def repeated_request(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> tuple[str, Action] | None:
    """A message to an agent that answered the sender since its last message there: the
    sender sends that last message again, as if the answer had not come."""
    to = _TO.match(action.content) if action.tool is None else None
    if to is None:
        return None
    sent = [
        i
        for i, s in enumerate(history)
        if s.actor == action.actor and s.kind == "message" and s.content.startswith(to.group(0))
    ]
    if not sent:
        return None
    last = history[sent[-1]]
    replied = any(
        s.actor == to.group(1)
        and s.kind == "message"
        and s.content.startswith(f"To {action.actor}:")
        for s in history[sent[-1] + 1 :]
    )
    if not replied or last.content == action.content:
        return None
    return "coordination.ignored_message", Action(action.actor, last.content)


_LIST = re.compile(r"\(([^()\n]+,[^()\n]+)\)")


def neighbouring_choice(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> tuple[str, Action] | None:
    """A word the action picks from a list the latest observation shows in parentheses
    (`colour (navy, teal)`) is replaced, in its text and arguments, by its neighbour in
    that list: the wrong entry of a list read."""
    observations = [s for s in history if s.kind == "observation"]
    args = action.tool_args or {}
    if not observations or action.tool is None or not args:
        return None
    lists = [
        [w.strip() for w in m.group(1).split(",")] for m in _LIST.finditer(observations[-1].content)
    ]
    options = [
        (str(value), entries[j])
        for value in args.values()
        if isinstance(value, str) and value.isalpha()
        for entries in lists
        if value in entries
        for j in (entries.index(value) - 1, entries.index(value) + 1)
        if 0 <= j < len(entries) and entries[j].isalpha()
    ]
    if not options:
        return None
    old, new = rng.choice(options)
    swapped = {k: new if v == old else v for k, v in args.items()}
    pattern = re.compile(rf"\b{re.escape(old)}\b")
    text = pattern.sub(lambda _: new, action.content)
    return "action.wrong_tool_argument", Action(action.actor, text, action.tool, swapped)


NATURAL: tuple[NaturalSlip, ...] = (
    stale_value,
    neighbouring_value,
    off_by_one,
    stale_name,
    rounded_value,
    early_answer,
    repeated_request,
    neighbouring_choice,
)


def natural_slip(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> tuple[str, Action] | None:
    """The natural slip at this step: one of the slips that can happen here, drawn."""
    kinds = list(NATURAL)
    rng.shuffle(kinds)
    for kind in kinds:
        out = kind(action, rng, history)
        if out is not None and out[1] != action:
            return out
    return None
