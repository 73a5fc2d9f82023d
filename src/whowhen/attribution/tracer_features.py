"""Per-step features for tracer-lite: what a reader of the log could notice about a step.

Each candidate (an agent step) gets a few dense features (where it sits in the run, what
kind of agent took it, whether the next observation shows an error, whether it commits to
a value nothing supports, whether later steps repeat its new values) and hashed tokens
(words of its content and tool arguments, its tool, its role crossed with the system and
the position). Only the log is read, so imported trajectories get the same features as
built ones. Hashing is by CRC-32: stable across processes and machines.
"""

from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass

import numpy as np
import polars as pl

from whowhen.attribution.heuristics import (
    error_signal_detail,
    has_error,
    is_agent,
    numbers,
    payload,
    signals,
    ungrounded,
)

DENSE = (
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
)
"""Names of the dense features, in column order (hashed tokens follow them)."""

_WORD = re.compile(r"[a-z_]{2,}|\d+(?:\.\d+)?")
_CHECKER = re.compile(r"verif|review|test|critic|check|judge", re.I)
_MANAGER = re.compile(r"orchestrat|planner|manager|captain|lead", re.I)
_TOOL_LIKE = re.compile(r"terminal|computer|executor|surfer|browser", re.I)
_FINISH = re.compile(r"\bterminate\b|final answer", re.I)
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
    return "first_agent" if actor == first_agent else "other"


def run_features(
    steps: pl.DataFrame, system: str, dim: int
) -> tuple[list[dict[str, float]], list[list[str]], list[dict]]:
    """(dense values, hashed tokens, candidate rows) for one run's steps."""
    rows = steps.sort("step").to_dicts()
    cands = [r for r in rows if is_agent(r["kind"], r["actor"])]
    if not cands:
        return [], [], []
    n = len(cands)
    first_agent = cands[0]["actor"]
    blamed, first_blamed, pick_step, error_steps = _error_signals(steps, cands)
    dense, tokens = [], []
    by_index = {r["step"]: i for i, r in enumerate(rows)}
    befores, laters = _number_context(rows)
    prev_actor = None
    for i, c in enumerate(cands):
        k = by_index[c["step"]]
        before, later = befores[k], laters[k]
        next_obs = _next_observation(rows, k)
        mine = _nums(c)
        new = {v for v in mine - before if v not in ("0", "1")}
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
                c["tool"] in FINISH_TOOLS or bool(_FINISH.search(c["content"] or ""))
            ),
            "next_obs_error": float(has_error(next_obs)),
            "next_obs_shares_numbers": float(bool(numbers(next_obs) & mine)),
            "ungrounded": float(bool(ungrounded(c, before))),
            "first_signal": float(c["step"] == first_blamed),
            "any_signal": float(c["step"] in blamed),
            "heuristic_pick": float(c["step"] == pick_step),
            "error_later": float(any(a > c["step"] for a in error_steps)),
            "new_values": min(len(new), 5) / 5,
            "new_values_reused": float(bool(new & later)),
            "log_len": math.log1p(len(c["content"] or "")) / 8,
            "same_actor_as_prev": float(c["actor"] == prev_actor),
        }
        prev_actor = c["actor"]
        dense.append(d)
        tokens.append(_tokens(c, system, role, rel))
    return dense, tokens, cands


def _error_signals(
    steps: pl.DataFrame, cands: list[dict]
) -> tuple[set[int], int | None, int | None, list[int]]:
    """What the log-reading heuristics say about one run: (steps any signal blames, the step
    the first signal blames, the error-signal attributor's pick, steps showing an error)."""
    sigs = signals(steps)
    blamed = {s.blamed for s in sigs}
    first_blamed = sigs[0].blamed if sigs else None
    cand_frame = steps.filter(
        (pl.col("kind") != "observation") & pl.col("step").is_in([c["step"] for c in cands])
    )
    pick = error_signal_detail(cand_frame, steps)
    pick_step = pick[1] if pick else None
    error_steps = [s.at for s in sigs if s.kind != "ungrounded_value"]
    return blamed, first_blamed, pick_step, error_steps


def _next_observation(rows: list[dict], k: int) -> str:
    """The content of the non-agent steps right after row k, up to the next agent step."""
    following = []
    for r in rows[k + 1 :]:
        if is_agent(r["kind"], r["actor"]):
            break
        following.append(r["content"] or "")
    return "\n".join(following)


def _number_context(rows: list[dict]) -> tuple[list[set[str]], list[set[str]]]:
    """Per row k: the numbers of every row before k, and of the agent steps after k. Built
    in one pass each way (a union per candidate step made long runs quadratic)."""
    nums = [_nums(r) for r in rows]
    befores: list[set[str]] = []
    seen: set[str] = set()
    for n in nums:
        befores.append(seen)
        seen = seen | n
    laters: list[set[str]] = [set()] * len(rows)
    seen = set()
    for k in range(len(rows) - 1, -1, -1):
        laters[k] = seen
        if is_agent(rows[k]["kind"], rows[k]["actor"]):
            seen = seen | nums[k]
    return befores, laters


def _nums(row: dict) -> set[str]:
    return numbers(row["content"]) | numbers(payload(row["tool"], row["tool_args"]))


def _tokens(c: dict, system: str, role: str, rel: float) -> list[str]:
    """Hashed tokens: words (numbers collapsed), tool, and role/position crossed with the
    system, so one linear model can hold per-system position priors."""
    text = f"{c['content'] or ''} {payload(c['tool'], c['tool_args'])}".lower()
    words = ["w:" + ("<num>" if w[0].isdigit() else w) for w in _WORD.findall(text)[:400]]
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
        dense, tokens, cands = run_features(frame, system_of[run_id] or "", dim)
        for d, toks, c in zip(dense, tokens, cands, strict=True):
            row = len(actors)
            actors.append(c["actor"])
            step_list.append(c["step"])
            for name, value in d.items():
                if value:
                    r_idx.append(row)
                    c_idx.append(index[name])
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
