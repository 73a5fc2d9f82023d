"""Template-independent cues for tracer-lite: what any log shows around a step, whatever
system wrote it. Built data and real trajectories (Who&When's CaptainAgent and
Magentic-One runs) share these, so weights learned on one can transfer to the other.

Every cue is computed for a whole run in one or two passes over its rows (first-seen and
last-seen indexes instead of growing sets), so a run costs time linear in its length.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from whowhen.attribution.heuristics import (
    has_error,
    numbers,
    payload,
    prose,
    rejects,
    salient,
)

CORRECTION_RE = re.compile(
    r"\bapologi[sz]e|\bmy (?:mistake|error)|\bmistake\b|\bincorrect\b|\bwrong\b|"
    r"\bcorrect(?:ion|ed)\b|\bre-?(?:check|verify|evaluate|examine)|\bdiscrepanc|"
    r"\bcontradict|\bactually\b|\bhowever,? (?:the|this|it)\b",
)
"""A later step saying that something before it was wrong."""

PLAN_CHANGE_RE = re.compile(
    r"\bnew plan\b|\bupdated? (?:the )?plan\b|\bre-?plan|\bdifferent (?:approach|strategy)|"
    r"\balternative(?:ly)?\b|\binstead\b|\blet(?:'s| us) try\b|\bchange (?:of )?(?:approach|plan)",
)
"""A step announcing that the plan changes."""

APPROVE_RE = re.compile(
    r"\b(?:confirm(?:ed|s)?|verified|is (?:correct|accurate|right)|are (?:correct|accurate)|"
    r"looks (?:good|correct)|i agree|approved?)\b",
)
"""A step vouching for earlier work (a wrong approval passes an error on)."""

HEDGE_RE = re.compile(
    r"\bfrom my (?:knowledge|memory|experience)\b|\bas far as i know\b|\bi (?:believe|recall|"
    r"assume|think)\b|\bassum(?:e|ing|ption)\b|\bprobably\b|\blikely\b|\btypically\b|"
    r"\bapproximately\b|\bestimat|\bhypothetical|\bplaceholder|\bexample (?:data|values?)\b|"
    r"\bmock\b|\bsimulat",
)
"""A claim resting on memory or assumption rather than on anything observed."""

FIX_RE = re.compile(r"\berror\b|\bfix|\bretry|\bagain\b|\bfail|\bissue\b|\bproblem\b")
"""A step that deals with an error instead of moving past it."""

_SPACE = re.compile(r"\s+")


CUES = {
    "correction": CORRECTION_RE,
    "plan_change": PLAN_CHANGE_RE,
    "approves": APPROVE_RE,
    "hedges": HEDGE_RE,
    "fix": FIX_RE,
}
CUE_HEAD, CUE_TAIL = 800, 200
"""Characters the language cues read: an agent's own words open or close its step."""


@functools.lru_cache(maxsize=4096)
def cues_in(text: str) -> frozenset[str]:
    """The language cues (`CUES` keys, plus `reject`) a step's text shows, each pattern run
    once per text: lowercase, head and tail only, patterns compiled without re.I (the
    language checks were most of tracer-lite's time on long real runs)."""
    low = prose(text)
    if len(low) > CUE_HEAD + CUE_TAIL:
        low = low[:CUE_HEAD] + "\n" + low[-CUE_TAIL:]
    found = {name for name, pattern in CUES.items() if pattern.search(low)}
    if rejects(text):
        found.add("reject")
    return frozenset(found)


@dataclass(frozen=True)
class RunCues:
    """Per candidate (in step order) the template-independent cues, as 0/1 floats."""

    contradicted_later: list[float]
    plan_change_after: list[float]
    after_error: list[float]
    error_ignored: list[float]
    repeats_earlier: list[float]
    repeated_later: list[float]
    origin_of_final: list[float]
    approves: list[float]
    hedges: list[float]


def text_of(row: dict) -> str:
    return f"{row['content'] or ''} {payload(row['tool'], row['tool_args'])}"


def _signature(row: dict) -> str:
    """What an action does, for spotting repeats: tool plus the start of its text."""
    return _SPACE.sub(" ", f"{row['tool'] or ''}|{text_of(row)[:300]}".lower()).strip()


def run_cues(
    rows: list[dict], cand_index: list[int], question: str | None, head: int | None = None
) -> RunCues:
    """Cues for the candidates `rows[i] for i in cand_index` of one run (rows in step
    order). Values of the question count as seen before every step; a step's values are
    read from its text's first `head` characters (all: None) and its tool arguments."""
    nums = [
        numbers((r["content"] or "")[:head]) | numbers(payload(r["tool"], r["tool_args"]))
        for r in rows
    ]
    first_seen: dict[str, int] = dict.fromkeys(numbers(question), -1)
    for i, ns in enumerate(nums):
        for v in ns:
            first_seen.setdefault(v, i)
    # the latest row showing a correction cue, for each value it mentions
    corrected: dict[str, int] = {}
    for i, r in enumerate(rows):
        if i and cues_in(r["content"] or "") & {"reject", "correction"}:
            for v in nums[i]:
                corrected[v] = i
    final = _final_values(rows, cand_index, nums)
    signatures = [_signature(rows[i]) for i in cand_index]
    seen_at: dict[str, list[int]] = {}
    for k, sig in enumerate(signatures):
        seen_at.setdefault(sig, []).append(k)
    out: dict[str, list[float]] = {name: [] for name in RunCues.__dataclass_fields__}
    for k, i in enumerate(cand_index):
        mine = cues_in(rows[i]["content"] or "")
        new = {v for v in nums[i] if first_seen[v] == i and salient(v)}
        prev = cand_index[k - 1] if k else 0
        error_before = k > 0 and any(has_error(rows[j]["content"]) for j in range(prev + 1, i))
        nxt = cues_in(rows[cand_index[k + 1]]["content"] or "") if k + 1 < len(cand_index) else ()
        same = seen_at[signatures[k]]
        out["contradicted_later"].append(float(any(corrected.get(v, -1) > i for v in new)))
        out["plan_change_after"].append(float("plan_change" in nxt or "correction" in nxt))
        out["after_error"].append(float(error_before))
        out["error_ignored"].append(float(error_before and "fix" not in mine))
        out["repeats_earlier"].append(float(same[0] < k))
        out["repeated_later"].append(float(same[-1] > k))
        out["origin_of_final"].append(float(bool(new & final)))
        out["approves"].append(float("approves" in mine))
        out["hedges"].append(float("hedges" in mine))
    return RunCues(**out)


def _final_values(rows: list[dict], cand_index: list[int], nums: list[frozenset[str]]) -> set:
    """The values the run ends on: those of its last two agent steps that state any."""
    stating = [i for i in cand_index if nums[i]][-2:]
    return {v for i in stating for v in nums[i] if salient(v)}
