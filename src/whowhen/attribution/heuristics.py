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

import functools
import json
import re
from collections.abc import Container
from dataclasses import dataclass

import polars as pl

from whowhen.attribution.baselines import agent_steps as candidate_steps
from whowhen.attribution.baselines import predict_each
from whowhen.attribution.kinds import ATTRIBUTORS, Attributor, AttributorContext
from whowhen.schema import NON_AGENT_ACTORS

ERROR_RE = re.compile(
    r"\berror\b|traceback|exception|\bfail(?:ed|s|ure)?\b|exitcode: [1-9]|not available|"
    r"nothing was bought|empty cart|no document|not found|invalid|cannot|unable to",
)
"""Error text in an observation (or a tool-like agent's report: "exitcode: 1 ..."), matched
against `prose(text)` (lowercase)."""

_ERROR_WORDS = (
    "error", "traceback", "exception", "fail", "exitcode", "not available", "nothing was",
    "empty cart", "no document", "not found", "invalid", "cannot", "unable to",
)  # fmt: skip
"""A literal that every ERROR_RE match contains: substring tests (fast) skip the pattern
for the many texts that hold none of them."""

REJECT_RE = re.compile(
    r"check failed|please (?:fix|redo)|redo the|send(?:ing)? it back|does not match|"
    r"doesn't match|mismatch|is incorrect|is wrong|not correct",
)
"""A checker's rejection of another agent's work, matched against `prose(text)`."""

_REJECT_WORDS = (
    "check failed", "please", "redo", "it back", "match", "is incorrect", "is wrong",
    "not correct",
)  # fmt: skip
"""A literal that every REJECT_RE match contains (as `_ERROR_WORDS`)."""

PROSE_HEAD, PROSE_TAIL = 4000, 2000
"""Characters of a step the language checks read: its head and its tail. An agent's own
words, an error line and a traceback's last line sit there; reading a 100 kB page dump
whole with a dozen patterns made long real runs slow."""

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


def numbers(text: str | None) -> frozenset[str]:
    """The numbers a text mentions, normalised (`7.0` and `7` are the same value)."""
    return _numbers(text or "")


@functools.lru_cache(maxsize=4096)
def _numbers(text: str) -> frozenset[str]:
    """Cached: the heuristics and tracer-lite's features read each step's numbers several
    times, and real steps (web pages, tool dumps) run to tens of kilobytes."""
    return frozenset(_canonical(raw) for raw in _NUM_RE.findall(text))


def _canonical(raw: str) -> str:
    """One spelling per value, in plain digits: `7.0` -> `7`, `0.000010` -> `0.00001`.
    Exact decimal arithmetic, not float: a float turns 0.00001 into `1e-05` and a
    400-digit number into `inf`, and real trajectories hold both."""
    if raw[0] not in "-0" and "." not in raw:  # the common case: already canonical
        return raw
    sign, digits = ("-", raw[1:]) if raw.startswith("-") else ("", raw)
    whole, _, frac = digits.partition(".")
    whole, frac = whole.lstrip("0") or "0", frac.rstrip("0")
    if whole == "0" and not frac:
        return "0"
    return f"{sign}{whole}.{frac}" if frac else f"{sign}{whole}"


@functools.lru_cache(maxsize=4096)
def prose(text: str) -> str:
    """The head and tail of a text, lowercased once (patterns without re.I run several
    times faster)."""
    if len(text) > PROSE_HEAD + PROSE_TAIL:
        text = text[:PROSE_HEAD] + "\n" + text[-PROSE_TAIL:]
    return text.lower()


def has_error(text: str | None) -> bool:
    """Error text, or a test report with fewer passes than examples."""
    return _has_error(text or "")


@functools.lru_cache(maxsize=4096)
def _has_error(text: str) -> bool:
    low = prose(text)
    if any(int(a) < int(b) for a, b in _TESTS_RE.findall(low)):
        return True
    return any(word in low for word in _ERROR_WORDS) and bool(ERROR_RE.search(low))


@functools.lru_cache(maxsize=4096)
def rejects(text: str) -> bool:
    """A checker's rejection (`REJECT_RE`) in the text's head or tail."""
    low = prose(text)
    return any(word in low for word in _REJECT_WORDS) and bool(REJECT_RE.search(low))


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


def ungrounded(row: dict, seen: Container[str]) -> set[str]:
    """Numbers an agent step commits to that nothing supports: a tool argument its own
    statement gives differently ("73 - 64" stated, `73 - 54` passed), or a value (not a
    small count) that appears nowhere earlier in the run. Code is skipped (literals in a
    program are not claims), and so are SQL rounding digits."""
    if row["tool"] in _CODE_TOOLS or "def " in (row["tool_args"] or ""):
        return set()
    stated = numbers(row["content"])
    if row["tool"] is None:  # a message commits to what it says
        return {n for n in stated if n not in seen and salient(n)}
    committed = numbers(_ROUND_RE.sub(r"\1)", payload(row["tool"], row["tool_args"])))
    contradicted = committed - stated if stated else set()
    made_up = {n for n in committed - stated if n not in seen and salient(n)}
    return {n for n in contradicted | made_up if n not in ("0", "1", "-1")}


def salient(number: str) -> bool:
    """A value worth checking: not a small whole number (counts, step sizes, indices).
    `number` is canonical (`numbers`): a whole number of two or more digits is >= 10."""
    return "." in number or len(number.lstrip("-")) >= 2


def signals(steps: pl.DataFrame) -> list[Signal]:
    """Every signal in one run's steps (all kinds, in step order)."""
    return signals_in(steps.sort("step").to_dicts())


def signals_in(rows: list[dict]) -> list[Signal]:
    """`signals` over one run's step rows, already in step order."""
    seen: set[str] = set()
    out: list[Signal] = []
    agent_rows: list[dict] = []
    for row in rows:
        text = row["content"] or ""
        if is_agent(row["kind"], row["actor"]) and row["step"] > 0:
            if rejects(text) and agent_rows:
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


@ATTRIBUTORS.register("error_signal", protocol="baseline", family="none", section="learned")
def _error_signal(ctx: AttributorContext) -> Attributor:
    return lambda runs, steps: predict_each(
        "error_signal", runs, steps, candidate_steps(steps), error_signal_detail
    )
