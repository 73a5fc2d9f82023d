"""The error-signal heuristic: blame the agent step after which the log first shows trouble.

A reader without a model or an environment can still see where a run visibly goes wrong:
a tool answers with an error, tests fail, a checker rejects ("Check failed"), or an agent
acts on a value that nothing before it supports (it states one number and passes another,
or names a value no observation showed). The heuristic finds the first such signal and
blames the agent step that produced it; a run with no signal falls back to the last agent
step (where a silent error most often surfaces: the final answer).

It reads only the log (any kind of steps table, imported ones too), so it is a floor for
content-reading attributors and a feature source for tracer-lite (`signals`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import polars as pl

from whowhen.schema import NON_AGENT_ACTORS

ERROR_RE = re.compile(
    r"\berror\b|traceback|exception|\bfail(?:ed|s|ure)?\b|exitcode: [1-9]|not available|"
    r"nothing was bought|empty cart|no document|not found|invalid|cannot|unable to",
    re.I,
)
"""Error text in an observation (or a tool-like agent's report: "exitcode: 1 ...")."""

REJECT_RE = re.compile(
    r"check failed|please (?:fix|redo)|redo the|send(?:ing)? it back|does not match|"
    r"doesn't match|mismatch|is incorrect|is wrong|not correct",
    re.I,
)
"""A checker's rejection of another agent's work."""

_TESTS_RE = re.compile(r"(\d+)/(\d+) examples passed")
_NUM_RE = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
_CODE_TOOLS = ("write_code",)
_NOT_RE = re.compile(r"\bnot\b", re.I)
_ROUND_RE = re.compile(r"(ROUND\([^()]*(?:\([^()]*\))?[^()]*?),\s*\d+\s*\)", re.I)


@dataclass(frozen=True)
class Signal:
    """One sign of trouble: where it shows (`at`), which agent step it blames, and why."""

    at: int
    blamed: int
    kind: str  # error_observation | error_report | rejection | ungrounded_value
    detail: str


def numbers(text: str | None) -> set[str]:
    """The numbers a text mentions, normalised (`7.0` and `7` are the same value)."""
    return {_canonical(raw) for raw in _NUM_RE.findall(text or "")}


def _canonical(raw: str) -> str:
    """One spelling per value, in plain digits: `7.0` -> `7`, `0.000010` -> `0.00001`.
    Exact decimal arithmetic, not float: a float turns 0.00001 into `1e-05` and a
    400-digit number into `inf`, and real trajectories hold both."""
    sign, digits = ("-", raw[1:]) if raw.startswith("-") else ("", raw)
    whole, _, frac = digits.partition(".")
    whole, frac = whole.lstrip("0") or "0", frac.rstrip("0")
    if whole == "0" and not frac:
        return "0"
    return f"{sign}{whole}.{frac}" if frac else f"{sign}{whole}"


def has_error(text: str | None) -> bool:
    """Error text, or a test report with fewer passes than examples."""
    text = text or ""
    failed = any(int(a) < int(b) for a, b in _TESTS_RE.findall(text))
    return failed or bool(ERROR_RE.search(text))


def is_agent(kind: str, actor: str) -> bool:
    return kind != "observation" and actor not in NON_AGENT_ACTORS


def payload(tool: str | None, tool_args: str | None) -> str:
    """What an action commits to: its tool arguments as text (values only, keys dropped)."""
    if not tool_args:
        return ""
    try:
        args = json.loads(tool_args)
    except (TypeError, ValueError):
        return str(tool_args)
    values = args.values() if isinstance(args, dict) else [args]
    return " ".join(str(v) for v in values)


def ungrounded(row: dict, seen: set[str]) -> set[str]:
    """Numbers an agent step commits to that nothing supports: a tool argument its own
    statement gives differently ("73 - 64" stated, `73 - 54` passed), or a value (not a
    small count) that appears nowhere earlier in the run. Code is skipped (literals in a
    program are not claims), and so are SQL rounding digits."""
    if row["tool"] in _CODE_TOOLS or "def " in (row["tool_args"] or ""):
        return set()
    stated = numbers(row["content"])
    if row["tool"] is None:  # a message commits to what it says
        return {n for n in stated - seen if _salient(n)}
    committed = numbers(_ROUND_RE.sub(r"\1)", payload(row["tool"], row["tool_args"])))
    contradicted = committed - stated if stated else set()
    made_up = {n for n in committed - stated - seen if _salient(n)}
    return {n for n in contradicted | made_up if n not in ("0", "1", "-1")}


def _salient(number: str) -> bool:
    """A value worth checking: not a small whole number (counts, step sizes, indices).
    `number` is canonical (`numbers`): a whole number of two or more digits is >= 10."""
    return "." in number or len(number.lstrip("-")) >= 2


def signals(steps: pl.DataFrame) -> list[Signal]:
    """Every signal in one run's steps (all kinds, in step order)."""
    rows = steps.sort("step").to_dicts()
    seen: set[str] = set()
    out: list[Signal] = []
    agent_rows: list[dict] = []
    for row in rows:
        text = row["content"] or ""
        if is_agent(row["kind"], row["actor"]) and row["step"] > 0:
            if REJECT_RE.search(text) and agent_rows:
                out.append(Signal(row["step"], _disputed(row, agent_rows), "rejection", text))
            elif has_error(text) and agent_rows:
                blamed = _previous_other(row, agent_rows)
                out.append(Signal(row["step"], blamed, "error_report", text))
            bad = ungrounded(row, seen)
            if bad:
                detail = "unsupported value(s) " + ", ".join(sorted(bad))
                out.append(Signal(row["step"], row["step"], "ungrounded_value", detail))
            agent_rows.append(row)
        elif has_error(text) and agent_rows and row["step"] > 0:
            out.append(Signal(row["step"], agent_rows[-1]["step"], "error_observation", text))
        seen |= numbers(text) | numbers(payload(row["tool"], row["tool_args"]))
    return out


def _previous_other(row: dict, agent_rows: list[dict]) -> int:
    """The latest earlier agent step by another actor (whose work the report is about)."""
    other = [r for r in agent_rows if r["actor"] != row["actor"]]
    return (other or agent_rows)[-1]["step"]


def _disputed(row: dict, agent_rows: list[dict]) -> int:
    """For a rejection naming wrong values ("reports 78, not 87"): the earliest agent step
    that stated one of them; otherwise the latest step by another actor."""
    negation = _NOT_RE.search(row["content"])
    wrong = numbers(row["content"][negation.end() :]) if negation else set()
    for r in agent_rows:
        if r["actor"] != row["actor"] and wrong & (
            numbers(r["content"]) | numbers(payload(r["tool"], r["tool_args"]))
        ):
            return r["step"]
    return _previous_other(row, agent_rows)


def error_signal_detail(
    agent_steps: pl.DataFrame, all_steps: pl.DataFrame
) -> tuple[str, int, str] | None:
    """(agent, step, reason) for one run: the step blamed by the first signal, else the
    last agent step. None when the run has no agent step."""
    if agent_steps.height == 0:
        return None
    ordered = agent_steps.sort("step")
    actor_of = dict(zip(ordered["step"], ordered["actor"], strict=True))
    for sig in signals(all_steps):
        if sig.blamed in actor_of:
            why = f"{sig.kind} at step {sig.at}: {sig.detail[:160]}"
            return actor_of[sig.blamed], sig.blamed, why
    last = ordered.row(-1, named=True)
    return last["actor"], last["step"], "no error signal: the last agent step"


def error_signal(agent_steps: pl.DataFrame, all_steps: pl.DataFrame) -> tuple[str, int] | None:
    """(agent, step) for one run. `agent_steps` = `baselines.agent_steps(steps)` of the run
    (the candidates), `all_steps` = every step of the run (observations carry the signals)."""
    found = error_signal_detail(agent_steps, all_steps)
    return None if found is None else (found[0], found[1])


HEURISTICS = {"error_signal": error_signal_detail}
"""Attributors that read (candidates, all steps) of one run -> (agent, step, reason)."""
