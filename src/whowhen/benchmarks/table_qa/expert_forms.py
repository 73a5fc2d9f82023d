"""What the data-analysis group chat says and runs on table QA, and how each step is read
back: the target (aggregate, measure, product, region, month) every step states, the
programs the experts write over the table's CSV file, and their outputs.

Why a module of its own: the policy (`experts`) and its error operators
(`expert_operators`) must say a step the same way; an operator re-says a step with the
policy's builders and another target, so an injected step reads like a policy's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.table_qa.env import DATA_FILE
from whowhen.benchmarks.table_qa.tasks import parse_question
from whowhen.runtime import Action, Step
from whowhen.tools import DATA_DIR, code_output, said

ANALYST, CODER, CHECKER = "DataAnalysis_Expert", "Python_Expert", "Verification_Expert"
PATH = f"{DATA_DIR}/{DATA_FILE}"
NUM = r"-?\d+(?:\.\d+)?"
_FIELDS = {
    "agg": r"total|average|largest|smallest",
    "measure": r"units|revenue",
    "product": r"\w+",
    "region": r"\w+",
    "month": r"\d+",
    "value": NUM,
    "check": r"[-\w.]+",
    "n": r"\d+",
    "column": r"\w+",
}
_TARGET = "{agg} {measure} of {product} sold in the {region} region in month {month}"


@dataclass(frozen=True)
class Target:
    """What the chat is computing, as a step states it."""

    agg: str
    measure: str
    product: str
    region: str
    month: str

    def fields(self) -> dict[str, str]:
        return dict(self.__dict__)

    def with_(self, **changes: str) -> Target:
        return replace(self, **changes)


def question_target(history: Sequence[Step]) -> Target:
    agg, measure, product, region, month = parse_question(history[0].content)
    return Target(agg, measure, product, region, str(month))


def _form(key: str, *variants: str) -> Form:
    return Form(f"tq.expert.{key}", variants, **_FIELDS)


PLAN = _form(
    "plan",
    f"To answer this we need the {_TARGET}. Plan:\n1. Load the table from {PATH} and "
    "look at its columns.\n2. Keep the rows of {product} in the {region} region in month "
    "{month}.\n3. Compute the {agg} of their {measure}.\n4. Verify the result.",
    "Let's break this down. The question asks for the {agg} {measure} of {product} in the "
    "{region} region in month {month}. Python_Expert, please load " + PATH + ", keep the "
    "matching rows and compute the {agg} of the {measure} column; Verification_Expert will "
    "check the result.",
)
PEEK = _form(
    "peek",
    "First, let me load the table and look at its columns and a few rows.",
    "I will start by checking the structure of the file.",
)
LIST = _form(
    "list",
    "Next, the rows of {product} in the {region} region in month {month}, with their {measure}:",
    "Now let me filter the {product} rows of the {region} region in month {month} and list "
    "their {measure}:",
)
FIX = _form(
    "fix",
    "The column is called `{column}` in lower case. Here is the corrected program for the "
    "{product} rows of the {region} region in month {month} and their {measure}:",
    "My mistake: the file's column is `{column}`. Filtering again for {product}, {region} "
    "region, month {month}, with their {measure}:",
)
CHECKIN = _form(
    "checkin",
    "I found {n} rows of {product} in the {region} region in month {month}. Next I compute "
    "the {agg} of their {measure}.",
    "Filtering gives {n} matching rows ({product}, {region} region, month {month}); the "
    "{agg} of their {measure} comes next.",
)
ACK = _form(
    "ack",
    "Good. Go ahead with the {agg} {measure} over those rows: {product}, {region} region, "
    "month {month}.",
    "That matches the plan: compute the {agg} of the {measure} for {product} in the "
    "{region} region, month {month}.",
)
AGG = _form(
    "agg",
    "Now the {agg} of the {measure} over the {product} rows of the {region} region in month "
    "{month}:",
    "Computing the {agg} {measure} for {product} in the {region} region, month {month}:",
)
REDO = _form(
    "redo",
    "Understood. The {agg} of the {measure} for {product} in the {region} region, month "
    "{month}, computed again:",
    "Let me fix that and compute the {agg} {measure} of {product}, {region} region, month "
    "{month}, once more:",
)
PROPOSE = _form(
    "propose",
    "The {agg} {measure} of {product} in the {region} region in month {month} is {value}.",
    "Result: the {agg} {measure} for {product}, {region} region, month {month}, is {value}. "
    "Verification_Expert, please check it.",
)
CHECK = _form(
    "check",
    "Let me verify the {agg} {measure} of {product} in the {region} region in month {month} "
    "another way, going through the rows one by one:",
    "I will recompute the {agg} of the {measure} for {product}, {region} region, month "
    "{month}, independently:",
)
NO_MONTH = _form(
    "nomonth",
    "The program keeps every month: it does not filter on month {month}. Please filter the "
    "month and compute again.",
    "Check failed: the filter has no month condition, so it covers all months, not month "
    "{month}. Please redo it.",
)
MISMATCH = _form(
    "mismatch",
    "My check gives {check}, not {value}. Please compute the {agg} {measure} again.",
    "The values disagree: {check} from my program against {value} proposed. Please "
    "compute the {agg} {measure} again.",
)
ASK = _form(
    "ask",
    "There is no value to check yet. Please compute the {agg} {measure} of {product} in the "
    "{region} region in month {month} and propose it.",
)
APPROVE = _form(
    "approve",
    "The program filters the product, region and month and computes the {agg} of the "
    "{measure}. The answer is {value}.",
    "Verified: the {agg} {measure} of {product} in the {region} region in month {month} "
    "checks out. The answer is {value}.",
)
STATES = (PLAN, LIST, FIX, CHECKIN, ACK, AGG, REDO, PROPOSE, CHECK)
"""The forms whose steps state the whole target (each later step takes it from the most
recent one)."""
SENDS_BACK = (NO_MONTH, MISMATCH, ASK)

# --- programs ----------------------------------------------------------------------------

_LOAD = (
    'import csv\n\nwith open("' + PATH + '") as f:\n'
    "    rows = [r for r in csv.DictReader(f) if {cond}]\n"
)
_VALUES = 'values = [float(r["{measure}"]) for r in rows{skip}]\n'
AGG_EXPR = {
    "total": "round(sum(values), 2)",
    "average": "round(sum(values) / len(values), 2)",
    "largest": "max(values)",
    "smallest": "min(values)",
}
CHECK_EXPR = {
    "total": "round(math.fsum(acc), 2)",
    "average": "round(statistics.mean(acc), 2)",
    "largest": "sorted(acc)[-1]",
    "smallest": "sorted(acc)[0]",
}
PEEK_CODE = (
    'import csv\n\nwith open("' + PATH + '") as f:\n    rows = list(csv.DictReader(f))\n'
    'print(len(rows), "rows; columns:", ", ".join(rows[0]))\nfor row in rows[:3]:\n'
    "    print(row)"
)
_COND = re.compile(r'r\["(\w+)"\] == "(\w+)"')
_MEASURE = re.compile(r'float\(r\["(\w+)"\]\)')


def condition(t: Target, month: bool = True, region_column: str = "region") -> str:
    conds = [f'r["product"] == "{t.product}"', f'r["{region_column}"] == "{t.region}"']
    if month:
        conds.append(f'r["month"] == "{t.month}"')
    return " and ".join(conds)


def list_code(t: Target, region_column: str = "region") -> str:
    load = _LOAD.format(cond=condition(t, region_column=region_column))
    body = _VALUES.format(measure=t.measure, skip="")
    return f'{load}{body}print(len(values), "matching rows:", values)'


def agg_code(t: Target, month: bool = True, skip_first: bool = False) -> str:
    load = _LOAD.format(cond=condition(t, month))
    body = _VALUES.format(measure=t.measure, skip="[1:]" if skip_first else "")
    note = "  # skip the header row" if skip_first else ""
    return f"{load}{body.rstrip()}{note}\nprint({AGG_EXPR[t.agg]})"


def check_code(t: Target) -> str:
    return (
        f'import csv\nimport math\nimport statistics\n\nacc = []\nwith open("{PATH}") as f:\n'
        f"    for r in csv.DictReader(f):\n        if {condition(t)}:\n"
        f'            acc.append(float(r["{t.measure}"]))\nprint({CHECK_EXPR[t.agg]})'
    )


def program_kind(code: str) -> str:
    """peek, list, agg or check (by what the program prints)."""
    if "math.fsum" in code or "statistics" in code or "sorted(acc)" in code:
        return "check"
    if "matching rows" in code:
        return "list"
    return "agg" if "values" in code else "peek"


def filters_month(code: str) -> bool:
    return any(col == "month" for col, _ in _COND.findall(code))


def stated(step: Step | Action) -> tuple[Form, dict[str, str]] | None:
    """(form, fields) of a step that states the target, else None."""
    text = said(step)
    for form in STATES:
        fields = form.fields(text)
        if fields is not None:
            return form, fields
    return None


def target_of(fields: dict[str, str], before: Target) -> Target:
    """The target a statement gives (fields it leaves out, such as a listing's aggregate,
    are taken from the target believed before it)."""
    known = {k: v for k, v in fields.items() if k in Target.__dataclass_fields__}
    return before.with_(**known)


def believed(history: Sequence[Step]) -> Target:
    """The target as the most recent step stated it (the question's before the plan)."""
    target = question_target(history)
    for step in history[1:]:
        if step.is_agent_step and (found := stated(step)) is not None:
            target = target_of(found[1], target)
    return target


def printed_number(text: str) -> str:
    """The last number a program printed ('' if none)."""
    found = re.findall(NUM, code_output(text))
    return found[-1] if found else ""


def listed(text: str) -> list[str]:
    """The values a listing printed."""
    inside = code_output(text).partition("[")[2].partition("]")[0]
    return [v.strip() for v in inside.split(",") if v.strip()]
