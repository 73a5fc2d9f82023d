"""Per-step features for tracer-lite: what a reader of the log could notice about a step.

Each candidate (an agent step) gets dense features: where it sits in the run, which turn of
its agent it is (first, second, third, last; an agent's share of the turns), what kind of
agent took it (by its name: checker, manager, tool-like, browser), whether the next
observation shows an error, whether it commits to a value nothing supports, whether later
steps repeat its new values, and the template-independent cues of `tracer_cues` (a later
correction of its values, a change of plan after it, an error it moves past, repeated
actions, the origin of the values the run ends on, approval and hedging language). The
`full` feature set adds hashed tokens (words of its content and tool arguments, its tool,
its role crossed with the system and the position): they fit the built data's templates
closely and do not transfer to other systems' logs, so `transfer` (dense only) is the
default. Only the log is read, so imported trajectories get the same features as built
ones. Hashing is by CRC-32: stable across processes and machines. Each dense feature also
has a `long:` column that only runs of more than `LONG_RUN` agent steps fill, so short
chats and long web runs get weights of their own.

Cost is linear in a run's length: numbers and error checks are cached per text, and
"seen before" / "used later" are first-seen and last-seen indexes, not growing sets.
"""

from __future__ import annotations

import itertools
import math
import re
import zlib
from dataclasses import dataclass

import numpy as np
import polars as pl

from whowhen.attribution.heuristics import (
    has_error,
    is_agent,
    numbers,
    payload,
    prose,
    salient,
    signals_in,
    ungrounded,
)
from whowhen.attribution.tracer_cues import RunCues, run_cues

BASE = (
    "rel_pos",
    "rel_pos_sq",
    "is_first",
    "is_last",
    "log_n",
    "is_message",
    "role_first_agent",
    "role_checker",
    "role_manager",
    "role_tool_like",
    "role_other",
    "is_finish",
    "next_obs_error",
    "next_obs_shares_numbers",
    "ungrounded",
    "first_signal",
    "any_signal",
    "heuristic_pick",
    "error_later",
    "new_values",
    "new_values_reused",
    "log_len",
    "same_actor_as_prev",
    "pos_second",
    "pos_third",
    "actor_first",
    "actor_second",
    "actor_third",
    "first_of_later_agent",
    "actor_last",
    "actor_share",
    "role_browser",
    "has_code",
    "tool_output_next",
    "addresses_other",
    "stalled_before",
    *RunCues.__dataclass_fields__,
)
"""The per-step features `run_features` computes."""

LONG_RUN = 20
"""Agent steps above which a run is long. Long multi-page runs (a web orchestrator's) and
short chats (an expert group's) place their errors differently: each base feature has a
second column that only long runs fill, so one linear model holds two sets of weights
(20 chosen by cross-validation on real dev data; 15 and 30 scored alike)."""

LONG_HEAD = 500
"""Characters of a step's text whose values count in a long run. A long run's steps are
page and file dumps (a web surfer's screenshot text, OCR, metadata) whose many numbers are
the page's, not claims of the agent; the values it commits to open its step. Short runs
read whole steps (a chat's answer often closes its message). 500 chosen by
cross-validation on real dev data (300 and 1000 scored lower on its hand-crafted runs)."""

DENSE = (*BASE, *(f"long:{name}" for name in BASE))
"""Names of the dense columns, in order (hashed tokens follow them)."""

FEATURE_SETS = ("transfer", "full")
"""transfer: the dense features only; full: dense plus `dim` hashed tokens."""

_WORD = re.compile(r"[a-z_]{2,}|\d+(?:\.\d+)?")
_CHECKER = re.compile(r"verif|review|test|critic|check|judge", re.I)
_MANAGER = re.compile(r"orchestrat|planner|manager|captain|lead", re.I)
_TOOL_LIKE = re.compile(r"terminal|computer|executor", re.I)
_BROWSER = re.compile(r"surfer|browser|navigator|web", re.I)
_CODE = re.compile(r"```|\bdef \w+\(|\bimport \w+")
_ADDRESS = re.compile(r"->|\bplease\b|\bnext speaker\b|@\w+")
_STALL = re.compile(
    r'"is_progress_being_made"\s*:\s*\{[^{}]*?"answer"\s*:\s*false|'
    r'"is_in_loop"\s*:\s*\{[^{}]*?"answer"\s*:\s*true|\bstalled\b|'
    r"\bno (?:further )?progress\b|\bnot (?:making|made) (?:any )?progress|\bin a loop\b|"
    r"\bgoing in circles\b|\bstuck\b"
)  # on prose(): lowercase
"""A progress check saying the run is stuck: a web orchestrator's ledger (progress false,
or in a loop) or plain words. Annotators blame the step that sent a run astray, which
comes before the run first notices it is stuck."""
_FINISH = re.compile(r"\bterminate\b|final answer")  # on prose(): lowercase
FINISH_TOOLS = ("final_answer", "checkout")


@dataclass(frozen=True)
class Features:
    """Candidates of many runs, ordered by (run, step), with a sparse design matrix as
    (row, column, value) triplets; `offsets[k]` is the first row of run k."""

    run_ids: list[str]
    offsets: np.ndarray
    steps: np.ndarray
    actors: list[str]
    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    n_cols: int

    @property
    def n_rows(self) -> int:
        return len(self.actors)


def bucket(token: str, dim: int) -> int:
    return zlib.crc32(token.encode()) % dim


def role_type(actor: str, first_agent: str) -> str:
    """The actor's role by its name, so unseen systems' agents map to known types."""
    if _CHECKER.search(actor):
        return "checker"
    if _MANAGER.search(actor):
        return "manager"
    if _TOOL_LIKE.search(actor):
        return "tool_like"
    if _BROWSER.search(actor):
        return "browser"
    return "first_agent" if actor == first_agent else "other"


def run_features(
    steps: pl.DataFrame, system: str, dim: int, question: str | None = None
) -> tuple[list[dict[str, float]], list[list[str]], list[dict]]:
    """(dense values, hashed tokens, candidate rows) for one run's steps."""
    rows = steps.sort("step").to_dicts()
    cand_index = [k for k, r in enumerate(rows) if is_agent(r["kind"], r["actor"])]
    cands = [rows[k] for k in cand_index]
    if not cands:
        return [], [], []
    n = len(cands)
    first_agent = cands[0]["actor"]
    head = LONG_HEAD if n > LONG_RUN else None
    blamed, first_blamed, pick_step, error_steps = _error_signals(rows, cands)
    cues = run_cues(rows, cand_index, question, head)
    last_error = max(error_steps, default=-1)
    dense, tokens = [], []
    first_seen, last_used = _number_context(rows, head)
    first_stall = next(
        (i for i, c in enumerate(cands) if _STALL.search(prose(c["content"] or ""))), n
    )
    prev_actor = None
    by_actor: dict[str, list[int]] = {}
    for i, c in enumerate(cands):
        by_actor.setdefault(c["actor"], []).append(i)
    for i, (k, c) in enumerate(zip(cand_index, cands, strict=True)):
        mine_steps = by_actor[c["actor"]]
        text = c["content"] or ""
        following = rows[k + 1] if k + 1 < len(rows) else None
        before = _SeenBefore(first_seen, k)
        next_error, next_numbers = _next_observation(rows, k, head)
        mine = _nums(c, head)
        new = {v for v in mine if v not in before and salient(v)}
        role = role_type(c["actor"], first_agent)
        rel = i / (n - 1) if n > 1 else 0.0
        d = {
            "rel_pos": rel,
            "rel_pos_sq": rel * rel,
            "is_first": float(i == 0),
            "is_last": float(i == n - 1),
            "log_n": math.log1p(n),
            "is_message": float(c["tool"] is None),
            f"role_{role}": 1.0,
            "is_finish": float(
                c["tool"] in FINISH_TOOLS or bool(_FINISH.search(prose(c["content"] or "")))
            ),
            "next_obs_error": float(next_error),
            "next_obs_shares_numbers": float(bool(next_numbers & mine)),
            "ungrounded": float(bool(ungrounded(c, before))),
            "first_signal": float(c["step"] == first_blamed),
            "any_signal": float(c["step"] in blamed),
            "heuristic_pick": float(c["step"] == pick_step),
            "error_later": float(c["step"] < last_error),
            "new_values": min(len(new), 5) / 5,
            "new_values_reused": float(any(last_used.get(v, -1) > k for v in new)),
            "log_len": math.log1p(len(c["content"] or "")) / 8,
            "same_actor_as_prev": float(c["actor"] == prev_actor),
            "pos_second": float(i == 1),
            "pos_third": float(i == 2),
            "actor_first": float(mine_steps[0] == i),
            "actor_second": float(len(mine_steps) > 1 and mine_steps[1] == i),
            "actor_third": float(len(mine_steps) > 2 and mine_steps[2] == i),
            "first_of_later_agent": float(mine_steps[0] == i and i > 0),
            "actor_last": float(mine_steps[-1] == i),
            "actor_share": len(mine_steps) / n,
            "has_code": float(c["tool"] is not None or bool(_CODE.search(text))),
            "tool_output_next": float(
                following is not None and not is_agent(following["kind"], following["actor"])
            ),
            "addresses_other": float(bool(_ADDRESS.search(f"{c['role'] or ''} {text[:300]}"))),
            "stalled_before": float(i > first_stall),
        }
        d.update({name: getattr(cues, name)[i] for name in RunCues.__dataclass_fields__})
        prev_actor = c["actor"]
        dense.append(d)
        tokens.append(_tokens(c, system, role, rel) if dim else [])
    return dense, tokens, cands


def _error_signals(
    rows: list[dict], cands: list[dict]
) -> tuple[set[int], int | None, int | None, list[int]]:
    """What the log-reading heuristics say about one run: (steps any signal blames, the step
    the first signal blames, the error-signal attributor's pick, steps showing an error).
    The pick is `heuristics.error_signal_detail`'s: the first signal's step that is a
    candidate, else the last candidate."""
    sigs = signals_in(rows)
    blamed = {s.blamed for s in sigs}
    first_blamed = sigs[0].blamed if sigs else None
    steps = {c["step"] for c in cands}
    pick_step = next((s.blamed for s in sigs if s.blamed in steps), cands[-1]["step"])
    error_steps = [s.at for s in sigs if s.kind != "ungrounded_value"]
    return blamed, first_blamed, pick_step, error_steps


def _next_observation(
    rows: list[dict], k: int, head: int | None = None
) -> tuple[bool, frozenset[str]]:
    """(any error shown, the numbers shown) by the non-agent steps right after row k, up to
    the next agent step: per-row cached checks, never a joined copy of the text."""
    error, shown = False, frozenset[str]()
    for r in rows[k + 1 :]:
        if is_agent(r["kind"], r["actor"]):
            break
        error = error or has_error(r["content"])
        shown = shown | numbers((r["content"] or "")[:head])
    return error, shown


class _SeenBefore:
    """`v in before`: value v appears in a row earlier than row k (a view, not a copy:
    copying a growing set per step made long runs quadratic)."""

    def __init__(self, first_seen: dict[str, int], k: int) -> None:
        self.first_seen, self.k = first_seen, k

    def __contains__(self, value: object) -> bool:
        return self.first_seen.get(value, self.k) < self.k  # type: ignore[arg-type]


def _number_context(
    rows: list[dict], head: int | None = None
) -> tuple[dict[str, int], dict[str, int]]:
    """(row of each value's first mention, last agent row using each value)."""
    first_seen: dict[str, int] = {}
    last_used: dict[str, int] = {}
    for k, row in enumerate(rows):
        mine = _nums(row, head)
        for v in mine:
            first_seen.setdefault(v, k)
        if is_agent(row["kind"], row["actor"]):
            last_used.update(dict.fromkeys(mine, k))
    return first_seen, last_used


def _nums(row: dict, head: int | None = None) -> set[str]:
    """The values a step states: in its text's first `head` characters (all: None) and its
    tool arguments."""
    return numbers((row["content"] or "")[:head]) | numbers(payload(row["tool"], row["tool_args"]))


def _tokens(c: dict, system: str, role: str, rel: float) -> list[str]:
    """Hashed tokens: words (numbers collapsed), tool, and role/position crossed with the
    system, so one linear model can hold per-system position priors."""
    text = f"{c['content'] or ''} {payload(c['tool'], c['tool_args'])}".lower()
    found = itertools.islice(_WORD.finditer(text), 400)
    words = ["w:" + ("<num>" if w[0].isdigit() else w) for w in (m.group() for m in found)]
    pos = min(int(rel * 4), 3)
    tool = c["tool"] or "message"
    return [
        *sorted(set(words)),
        f"tool:{tool}",
        f"role:{role}",
        f"sys:{system}|pos:{pos}",
        f"sys:{system}|role:{role}",
        f"sys:{system}|tool:{tool}",
        f"role:{role}|pos:{pos}",
        f"tool:{tool}|pos:{pos}",
    ]


def build(runs: pl.DataFrame, steps: pl.DataFrame, dim: int) -> Features:
    """Features of every run's candidates, runs in run_id order."""
    system_of = dict(zip(runs["run_id"], runs["system"], strict=True))
    question_of = dict(zip(runs["run_id"], runs["question"], strict=True))
    by_run = {key[0]: frame for key, frame in steps.group_by("run_id")}
    n_dense = len(DENSE)
    index = {name: j for j, name in enumerate(DENSE)}
    run_ids, offsets, step_list, actors = [], [], [], []
    r_idx: list[int] = []
    c_idx: list[int] = []
    v: list[float] = []
    for run_id in sorted(system_of):
        frame = by_run.get(run_id)
        run_ids.append(run_id)
        offsets.append(len(actors))
        if frame is None:
            continue
        dense, tokens, cands = run_features(
            frame, system_of[run_id] or "", dim, question_of[run_id]
        )
        long = len(cands) > LONG_RUN
        for d, toks, c in zip(dense, tokens, cands, strict=True):
            row = len(actors)
            actors.append(c["actor"])
            step_list.append(c["step"])
            for name, value in d.items():
                if value:
                    r_idx.append(row)
                    c_idx.append(index[name])
                    v.append(value)
                    if long:
                        r_idx.append(row)
                        c_idx.append(index[f"long:{name}"])
                        v.append(value)
            weight = 1.0 / math.sqrt(max(1, len(toks)))
            for col in sorted({n_dense + bucket(t, dim) for t in toks}):
                r_idx.append(row)
                c_idx.append(col)
                v.append(weight)
    offsets.append(len(actors))
    return Features(
        run_ids,
        np.asarray(offsets, dtype=np.int64),
        np.asarray(step_list, dtype=np.int64),
        actors,
        np.asarray(r_idx, dtype=np.int64),
        np.asarray(c_idx, dtype=np.int64),
        np.asarray(v, dtype=np.float64),
        n_dense + dim,
    )
