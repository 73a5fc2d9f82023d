"""The wordings of the arithmetic reference policies' steps, and the patterns that read
them back: an operation step's templates (one count per op, so an operator that changes
the op keeps the step's wording), proposals, answers and approvals, the detours (plans,
notes, re-checks, retries, recaps), the solver-verifier exchange and the code-as-action
notes. They live apart from the policies so that the policies read as decisions, and the
builders in `actions` and the operators draw from the same tables.
"""

from __future__ import annotations

import re

from whowhen.agents.phrasing import Form

_NUM = r"-?\d+(?:\.\d+)?"

_TEMPLATES: dict[str, tuple[str, ...]] = {
    "add": (
        "Next, add {n} to the running total of {a}.",
        "The running total is {a}; the next sentence adds {n} to it, so I compute the sum.",
        "Adding {n} to {a} gives the new total.",
        "Now {a} plus {n}: the problem puts {n} more on the pile here.",
    ),
    "sub": (
        "Next, subtract {n} from the running total of {a}.",
        "The running total is {a}; the next sentence takes {n} away, so I subtract.",
        "Subtracting {n} from {a} gives the new total.",
        "Now {a} minus {n}: the problem removes {n} from the pile here.",
    ),
    "mul": (
        "Next, multiply the running total of {a} by {n}.",
        "The running total is {a}; the next sentence makes it {n} times as large, so I multiply.",
        "Multiplying {a} by {n} gives the new total.",
        "Now {a} times {n}: the problem scales the pile by {n} here.",
    ),
    "div": (
        "Next, divide the running total of {a} by {n}.",
        "The running total is {a}; the next sentence splits it into {n} equal groups, so I divide.",
        "Dividing {a} by {n} gives the new total.",
        "Now {a} divided by {n}: the problem keeps one of {n} equal groups here.",
    ),
}
"""Op -> the wordings of an operation step (the same count per op: an operator that
changes the op keeps the step's wording)."""


def _pattern(template: str) -> re.Pattern[str]:
    """A template read back: {a} and {n} become number groups (a repeat must match)."""
    out, seen = re.escape(template), set()
    for name in ("a", "n"):
        while f"\\{{{name}\\}}" in out:
            group = f"(?P={name})" if name in seen else f"(?P<{name}>{_NUM})"
            out = out.replace(f"\\{{{name}\\}}", group, 1)
            seen.add(name)
    return re.compile(f"^{out}$")


_PATTERNS = {op: tuple(_pattern(t) for t in ts) for op, ts in _TEMPLATES.items()}
_STYLES = len(_TEMPLATES["add"])

PROPOSALS = (
    "I have applied all {n} operations. Proposed answer: {total}.",
    "All {n} operations are done and the last result is {total}. Proposed answer: {total}.",
    "That was the last of the {n} operations; please check my work. Proposed answer: {total}.",
)
PROPOSAL = PROPOSALS[0]
_PROPOSAL_RES = tuple(
    re.compile(
        "^"
        + re.escape(p)
        .replace(r"\{n\}", r"(?P<n>\d+)")
        .replace(r"\{total\}", rf"(?P<total>{_NUM})", 1)
        .replace(r"\{total\}", "(?P=total)")
        + "$"
    )
    for p in PROPOSALS
)

_ANSWERS = (
    "All operations are done; the answer is {answer}.",
    "Every operation has been applied, so the answer is {answer}.",
    "Nothing is left to apply: {name} ends up with {answer} {item}, so the answer is {answer}.",
)
_APPROVALS = (
    "I checked all {k} calculations against the problem; they use the right operations. "
    "Final answer: {answer}.",
    "Each of the {k} calculations uses the operation its sentence asks for. "
    "Final answer: {answer}.",
    "The {k} operations match the problem one by one, and the proposal is the last "
    "result. Final answer: {answer}.",
)


def _words(k: int) -> str:
    names = [
        "no",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
    ]
    return names[k] if 0 <= k < len(names) else str(k)


# --- detours: plans, notes, re-checks, retries, recaps -------------------------------

_PLANS = (
    "{name} starts with {start} {item} and the story has {k} operations. I will apply "
    "them one at a time and keep a running total.",
    "Plan: read the {k} changes to {name}'s {item} in order, compute each with the "
    "calculator, and carry the total forward from {start}.",
    "There are {k} steps after the start of {start} {item}. Doing them in one go is "
    "error-prone, so I will do one calculation per sentence.",
)
_NOTES_UP = (
    "The total went up to {total} because {name} gained {item}; {left} operations to go.",
    "{total} is larger than {previous}, as expected after that step. That leaves {left} "
    "operations.",
    "Good, {total} now. The pile grew, so the next sentences start from a bigger number; "
    "{left} still to apply.",
)
_NOTES_DOWN = (
    "The total dropped to {total} because {name} has fewer {item} now; {left} operations to go.",
    "{total} is smaller than {previous}, which fits the sentence. That leaves {left} operations.",
    "Down to {total}. The next sentences start from this smaller number; {left} still to apply.",
)
_RECHECKS = (
    "Let me re-check that step: {expr} again.",
    "Before going on I recompute the last step as {expr} to be sure.",
    "A quick check of the previous calculation: {expr}.",
)
_SWAPS = (
    "To be safe I check the last step the other way round: {expr}.",
    "Checking with the operands swapped: {expr} should match.",
    "Same step, other order: {expr}.",
)
_UNDOS = (
    "Checking by undoing the last step: {expr} should give back {previous}.",
    "If that was right, {expr} returns {previous}. Let me confirm.",
    "Reverse check: {expr} ought to be {previous} again.",
)
_CONFIRMS = (
    "That matches, so {total} stands.",
    "Confirmed: the running total is {total}.",
    "The check agrees; I continue from {total}.",
)
_RETRIES = (
    "Let me try {a} x {n} on the calculator.",
    "Computing {a} x {n} now.",
    "I enter {a} x {n}.",
)
_RETRY_NOTES = (
    "The calculator does not take x for multiplication; I will use * on {a} instead.",
    "That failed because x is not an operator here. Retrying with * on {a}.",
    "Wrong symbol: the tool wants *, not x. The total is still {a}.",
)
_RECAPS = (
    "Recap: {name} started with {start} {item}; after {k} operations the running total is {total}.",
    "To sum up, {k} operations took the count from {start} to {total}.",
    "Looking back over the work: start {start}, {k} steps, last result {total}. Every "
    "sentence of the problem has been used.",
)
_INVERSE = {"add": "-", "sub": "+", "mul": "/", "div": "*"}
_SELF_CHECKS = (
    "I recompute the solver's last step myself: {expr}.",
    "Spot check of the latest calculation: {expr}.",
    "Let me verify the last result independently with {expr}.",
)
_CHECK_STARTS = tuple(t.split("{")[0] for t in (*_RECHECKS, *_SWAPS, *_UNDOS, *_SELF_CHECKS))
_COMMUTES = ("add", "mul")


# --- solver + verifier ---------------------------------------------------------------

_CHECKINS = (
    "Progress report: {k} of {n} operations done, running total {total}.",
    "Checking in after {k} operations: the total is {total} so far, {left} to go.",
    "Partial result for review: the first {k} operations give {total}.",
)
_CHECKIN_RE = re.compile(
    r"^(?:Progress report: (?P<a>\d+) of|Checking in after (?P<b>\d+) operations"
    r"|Partial result for review: the first (?P<c>\d+) operations)"
)
_REPORTS = (
    "Re-checked: calculation {calc} gives {total}, so that is the running total.",
    "I redid calculation {calc} and got {total}; I go on from there.",
    "The re-check of calculation {calc} gives {total}.",
)
_REPORT_RE = re.compile(
    r"^(?:Re-checked: calculation|I redid calculation|The re-check of calculation)"
)
_ACKS = (
    "Confirmed so far: the first {k} calculations use the operations the problem asks for. "
    "Go on from {total}.",
    "Looks right up to here ({k} calculations checked). Continue from {total}.",
    "The {k} calculations match the problem's sentences. Carry on from {total}.",
)
_RECHECK_ASKS = (
    "Before you go on, please re-check calculation {calc}, {expr}: I want that number confirmed.",
    "Calculation {calc} ({expr}) deserves a second look; re-run it and tell me what you get.",
    "Please recompute step {calc}, {expr}, once more before continuing.",
)
_RECHECK_ASK_RE = re.compile(
    r"^(?:Before you go on, please re-check calculation (\d+)|Calculation (\d+) \(|"
    r"Please recompute step (\d+))"
)

_SELF_CHECK_NOTES = (
    "My spot check gives {value}; carry on from {value}.",
    "I get {value} for that step. Continue from {value}.",
    "{value} by my calculation. Go on from there.",
)
_COUNT_REJECTS = (
    "Check failed: the problem has {k} operations but I count {c} calculations. Please redo "
    "the calculation from the start.",
    "Check failed: the problem lists {k} operations, yet there are {c} calculations. Please "
    "start over.",
    "Check failed: the problem needs {k} calculations and I see {c}. Redo it from the "
    "beginning, please.",
)
_OP_REJECTS = (
    "Check failed at calculation {i}: the problem asks to {verb} {n}, but the calculation "
    "uses '{used}'. Please redo it and go on from there, starting again from {a}.",
    "Check failed at calculation {i}: the problem says {verb} {n}; the calculation uses "
    "'{used}' instead. Please redo from that step, starting again from {a}.",
    "Check failed at calculation {i}: the problem wants '{sym}' here ({verb} {n}), not "
    "'{used}'. Redo it and what follows, starting again from {a}.",
)
REDO_RE = re.compile(
    rf"^Check failed at calculation (?P<i>\d+): .*starting again from (?P<a>{_NUM})\.$"
)
"""A rejection of one calculation: the solver redoes the work from it, on the total the
verifier names (the one that calculation started from)."""
REJECTION_RE = re.compile(r"^Check failed(?: at calculation \d+)?: the problem ")


# --- code as action ------------------------------------------------------------------

_CODE_CHECKS = (
    "A small test of the last step: undo it and compare with {previous}.",
    "Let me assert that the last step can be reversed to {previous}.",
    "Sanity check in code: going back from {total} must give {previous}.",
)
_CODE_INVERSE = {"add": "-", "sub": "+", "mul": "//", "div": "*"}
_CODE_NOTES = (
    "The check passed, {total} stands; {left} operations left.",
    "Assertion held. Continuing from {total} with {left} operations to go.",
    "Good: the reverse step gives back the old total, so {total} is what the program computed.",
)
_CODE_RECAPS = (
    "Recap: {k} programs, one per operation, took the count from {start} to {total}.",
    "Every sentence of the problem has a program now; the last one printed {total}.",
    "Summing up the runs: start {start}, {k} operations, final output {total}.",
)


# --- the forms read back: what each step says the running total is -------------------

_FIELDS = {
    "total": _NUM,
    "previous": _NUM,
    "start": _NUM,
    "a": _NUM,
    "value": _NUM,
    "n": _NUM,
    "calc": r"\d+",
    "k": r"\w+",
    "left": r"\w+",
    "name": r"\w+",
    "item": r"\w+",
    "expr": rf"{_NUM} [-+*/] {_NUM}",
}


def _form(key: str, variants: tuple[str, ...]) -> Form:
    return Form(key, variants, **_FIELDS)


PLAN = _form("arith.plan", _PLANS)
NOTE_UP, NOTE_DOWN = _form("arith.note", _NOTES_UP), _form("arith.note", _NOTES_DOWN)
CONFIRM = _form("arith.confirm", _CONFIRMS)
RETRY = _form("arith.retry", _RETRIES)
RETRY_NOTE = _form("arith.why", _RETRY_NOTES)
RECAP = _form("arith.recap", _RECAPS)
RECHECK, SWAP, UNDO = _form("recheck", _RECHECKS), _form("swap", _SWAPS), _form("undo", _UNDOS)
SELF_CHECK = _form("arith.self", _SELF_CHECKS)
CHECKIN = _form("arith.checkin", _CHECKINS)
REPORT = _form("arith.report", _REPORTS)
ACK = _form("arith.ack", _ACKS)
ASK = _form("arith.ask", _RECHECK_ASKS)
SELF_NOTE = _form("arith.selfnote", _SELF_CHECK_NOTES)
PROPOSAL_FORM = _form("arith.propose", PROPOSALS)
CODE_CHECK = _form("code.check", _CODE_CHECKS)
CODE_NOTE = _form("code.note", _CODE_NOTES)
CODE_RECAP = _form("code.recap", _CODE_RECAPS)

STATEMENTS: tuple[tuple[Form, str], ...] = (
    (PLAN, "start"),
    (NOTE_UP, "total"),
    (NOTE_DOWN, "total"),
    (CONFIRM, "total"),
    (RETRY_NOTE, "a"),
    (RECAP, "total"),
    (CHECKIN, "total"),
    (REPORT, "total"),
    (ACK, "total"),
    (SELF_NOTE, "value"),
    (PROPOSAL_FORM, "total"),
    (CODE_NOTE, "total"),
    (CODE_RECAP, "total"),
)
"""The messages that state the agent's running total, and the field that holds it: what
a later step reads back as the agent's belief (see `actions.stated_total`)."""
