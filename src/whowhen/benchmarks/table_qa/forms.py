"""Every kind of table-QA agent step as a form with fields, built and read back the same
way, and the agent's working belief read from the steps.

Why forms: each step states part of what the agent believes (the target's aggregate,
measure, product, region and month, or the value found), and the next steps take that
belief from the most recent step that stated it (`belief`), not from the question. So an
error stated at any step (a note, an acknowledgement, a peek, a send-back) carries on to
the answer, as it would for an agent that trusts its own notes. An operator reads a step
into (kind, wording, fields), changes one stated field and builds the step again with the
same kind and wording (`operators._restate`): text and SQL always agree, because both are made from
the same fields. `read` accepts a step only when building it again gives the step back, so
anything that is not the policies' own form (another benchmark's step, a slip) is None.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from types import MappingProxyType
from typing import Any

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.table_qa.phrases import (
    _AGG_OF_SQL,
    _HOW,
    CROSS,
    QUERIES,
    VERIFIER_TEXTS,
    WORKER_TEXTS,
)
from whowhen.benchmarks.table_qa.tasks import AGGREGATES, PRODUCTS, REGIONS, parse_question
from whowhen.runtime import Action, Step

_NUMBER = r"\d+"
_VALUE = r"\S*?"
PATTERNS = {
    "agg": "|".join(AGGREGATES),
    "used": "|".join(AGGREGATES) + "|wrong value",
    "measure": "units|revenue",
    "product": "|".join(PRODUCTS),
    "region": "|".join(REGIONS),
    "month": _NUMBER,
    "k": _NUMBER,
    "n": _NUMBER,
    "value": _VALUE,
    "answer": _VALUE,
    "first": _VALUE,
    "how": "|".join(map(re.escape, _HOW.values())),
    "sqlagg": "|".join(AGGREGATES.values()),
}
"""What each field of a wording or a query may look like when read back."""

BELIEF = ("agg", "measure", "product", "region", "month", "value")
"""The fields of the agent's working belief: the target, and the value found for it."""
TARGET = BELIEF[:5]
_TOOLS = {
    **{name: "sql" for name in (*QUERIES, "cross", "rerun")},
    "answer": "final_answer",
    "approve": "final_answer",
}


@dataclass(frozen=True)
class Reading:
    """A step read back: its kind, its wording's index, every field (text and query) and
    the fields its text states."""

    kind: str
    index: int
    fields: Mapping[str, str]
    stated: frozenset[str]


def _names(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _derived(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The fields with the aggregate's other spellings (the cross-check's `how`, SQL's)."""
    out = dict(fields)
    if out.get("agg") in _HOW:
        out["how"], out["sqlagg"] = _HOW[out["agg"]], AGGREGATES[out["agg"]]
    return out


def _query(kind: str, fields: Mapping[str, Any]) -> str:
    """The SQL a query step of `kind` sends for `fields` (the re-run sends the aggregate's)."""
    if kind == "cross":
        return CROSS[fields["agg"]].format(**fields)
    return _query_template(kind).format(**fields)


def _query_template(kind: str) -> str:
    return QUERIES["agg"] if kind == "rerun" else QUERIES[kind]


def _texts(kind: str) -> tuple[str, ...]:
    return WORKER_TEXTS.get(kind) or VERIFIER_TEXTS[kind]


KINDS = (*WORKER_TEXTS, *VERIFIER_TEXTS)
"""Every kind of step of both systems."""


def build(kind: str, index: int, actor: str, **fields: Any) -> Action:
    """The step of `kind` in wording `index` with `fields` (text, tool and arguments)."""
    full = _derived(fields)
    texts = _texts(kind)
    text = texts[index % len(texts)].format(**full)
    tool = _TOOLS.get(kind)
    if tool == "sql":
        return Action(actor, text, tool, {"query": _query(kind, full)})
    if tool == "final_answer":
        return Action(actor, text, tool, {"answer": str(full["value"])})
    return Action(actor, text)


@cache
def _forms(kind: str) -> tuple[Form, Form | None]:
    text = Form(kind, _texts(kind), **PATTERNS)
    if _TOOLS.get(kind) != "sql":
        return text, None
    queries = tuple(CROSS.values()) if kind == "cross" else (_query_template(kind),)
    return text, Form(kind + ".sql", queries, **PATTERNS)


def _merge(*groups: Mapping[str, str]) -> dict[str, str] | None:
    """Fields of the text and of the query, with the aggregate in one spelling; None where
    they disagree."""
    out: dict[str, str] = {}
    for group in groups:
        for name, value in group.items():
            if name == "how":
                name, value = "agg", next(a for a, h in _HOW.items() if h == value)
            elif name == "sqlagg":
                name, value = "agg", _AGG_OF_SQL[value]
            if out.setdefault(name, value) != value:
                return None
    return out


def read(step: Action | Step) -> Reading | None:
    """The step as (kind, wording, fields), or None when it is none of the policies' forms."""
    return _read(step.content, step.tool, _args(step.tool_args))


def _args(args: Mapping[str, Any] | None) -> str:
    return json.dumps(args, sort_keys=True) if args else ""


@lru_cache(maxsize=65536)
def _read(content: str, tool: str | None, args: str) -> Reading | None:
    query = json.loads(args).get("query", "") if args and tool == "sql" else ""
    for kind in KINDS:
        if _TOOLS.get(kind) != tool:
            continue
        text_form, query_form = _forms(kind)
        for index, regex in enumerate(text_form.regexes):
            m = regex.match(content)
            if m is None:
                continue
            groups = [m.groupdict()]
            if query_form is not None:
                q = next((r.match(query) for r in query_form.regexes if r.match(query)), None)
                if q is None:
                    continue
                groups.append(q.groupdict())
            fields = _merge(*groups)
            if fields is None:
                continue
            try:
                rebuilt = build(kind, index, "", **fields)
            except KeyError:  # a field the step's form needs is not in it
                continue
            if rebuilt.content != content or _args(rebuilt.tool_args) != args:
                continue
            stated = _names(text_form.variants[index])
            stated = {"agg" if n == "how" else n for n in stated}
            return Reading(kind, index, MappingProxyType(fields), frozenset(stated))
    return None


def belief(history: Sequence[Step]) -> dict[str, str]:
    """What the agents last said about each field of the belief: for each field, the value
    the most recent agent step that states it gives (the question's target where no step
    has stated it yet; no value before one is found)."""
    out: dict[str, str] = {}
    for step in reversed(history):
        if not step.is_agent_step:
            continue
        reading = read(step)
        if reading is None:
            continue
        for name in reading.stated & set(BELIEF):
            out.setdefault(name, reading.fields[name])
        if len(out) == len(BELIEF):
            break
    if history:
        for name, value in zip(TARGET, parse_question(history[0].content), strict=True):
            out.setdefault(name, str(value))
    return out


def target(history: Sequence[Step]) -> dict[str, str]:
    """The belief's target fields only (what the next query filters and aggregates)."""
    found = belief(history)
    return {name: found[name] for name in TARGET}
