"""Label a natural failure of a recorded program by counterfactual replay.

For each agent step, earliest first, a model writes the step as it should have been
(`whowhen.correction`); where that differs from what the agent did, the program is
replayed with only that step changed (`recorded.replay`: the earlier calls from the
recording, checked, the later ones live). The decisive step is the earliest whose
correction turns the failure into a success. The search stops at the first flip, at
`max_replays` replays, or when the program cannot be replayed (it asked what its
recording did not, or the model failed): then there is no label, and it says why.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whowhen.correction import SCHEMA, correction_prompt, parse_correction
from whowhen.gateway.session import Forward
from whowhen.models.client import ModelClient
from whowhen.models.types import ChatRequest, Message
from whowhen.replay.recorded import Change, Located, replay

STOPPING = ("diverged", "model error", "no start")
"""Replay outcomes after which no later replay can say more."""


@dataclass(frozen=True)
class Attempt:
    step: int
    agent: str
    corrected: dict[str, Any] | None
    outcome: str  # success | failure | unchanged | unreadable | another replay outcome
    reason: str
    cost_usd: float = 0.0


@dataclass
class Blame:
    run_id: str
    status: str = "no flip"  # decisive | no flip | capped | blocked | not a failure
    reason: str = ""
    attempts: list[Attempt] = field(default_factory=list)
    correction_cost_usd: float = 0.0

    @property
    def decisive(self) -> Attempt | None:
        return self.attempts[-1] if self.status == "decisive" else None

    @property
    def replays(self) -> int:
        return sum(1 for a in self.attempts if a.outcome not in ("unchanged", "unreadable"))

    @property
    def cost_usd(self) -> float:
        return self.correction_cost_usd + sum(a.cost_usd for a in self.attempts)


def correct(
    client: ModelClient, located: Located, step: int, outcome: str
) -> tuple[dict[str, Any], float]:
    """The model's rewrite of agent step `step` and what asking cost; ValueError when its
    answer cannot be read or the model failed."""
    source = located.source(step)
    request = located.recording.exchanges[source.call].request
    prompt = correction_prompt(located.steps, step, request, outcome)
    [result] = client.complete(
        [ChatRequest(messages=(Message.text("user", prompt),), schema=SCHEMA, tag="blame")]
    )
    if not result.ok:
        raise ValueError(f"the model failed: {result.error}")
    return parse_correction(result.text), result.cost_usd


def blame(
    located: Located,
    client: ModelClient,
    forward: Forward,
    command: Sequence[str],
    *,
    judge: str | None = None,
    timeout_s: float | None = None,
    max_replays: int = 20,
    volatile: tuple[str, ...] = (),
    progress: Callable[[str], None] = lambda line: None,
) -> Blame:
    """Find the decisive step of the failed run `located` (see the module)."""
    rec = located.recording
    found = Blame(rec.run_id)
    if (rec.outcome or {}).get("success") is not False:
        found.status = "not a failure"
        found.reason = f"the run's outcome is {(rec.outcome or {}).get('outcome', 'unknown')}"
        return found
    for step in located.agent_steps():
        agent = located.steps[step]["actor"]
        if found.replays >= max_replays:
            found.status, found.reason = "capped", f"{max_replays} replays without a flip"
            return found
        try:
            corrected, cost = correct(client, located, step, "failure")
        except ValueError as exc:
            found.attempts.append(Attempt(step, agent, None, "unreadable", str(exc)))
            progress(f"step {step} ({agent}): no correction: {exc}")
            continue
        found.correction_cost_usd += cost
        if _same(corrected, located.current(step)):
            found.attempts.append(Attempt(step, agent, corrected, "unchanged", "kept as it was"))
            progress(f"step {step} ({agent}): kept as it was")
            continue
        change = Change(corrected["content"], corrected["tool"], corrected["arguments"])
        done = replay(located, step, change, forward, command, judge=judge,
                      timeout_s=timeout_s, volatile=volatile, echo=False)  # fmt: skip
        ended = done.ended
        found.attempts.append(
            Attempt(step, agent, corrected, ended.outcome, ended.reason, done.cost_usd)
        )
        progress(f"step {step} ({agent}): corrected, replayed: {ended.outcome} ({ended.reason})")
        if ended.outcome == "success":
            found.status, found.reason = "decisive", "the correction flips the outcome"
            return found
        if ended.outcome in STOPPING:
            found.status = "blocked"
            found.reason = f"replaying step {step}: {ended.outcome}: {ended.reason}"
            return found
    found.reason = f"no single corrected step flips the run ({found.replays} replays)"
    return found


def _same(corrected: dict[str, Any], current: dict[str, Any]) -> bool:
    if corrected["tool"] or current["tool"]:
        return (corrected["tool"], corrected["arguments"]) == (
            current["tool"],
            current["arguments"],
        )
    return corrected["content"].strip() == str(current["content"]).strip()


LABEL_COLUMNS = ("run_id", "agent", "step", "mode", "reason")


def write_label(path: Path, found: Blame) -> None:
    """Add (or replace) the run's row in a labels CSV that `--labels` reads."""
    decisive = found.decisive
    assert decisive is not None
    rows: dict[str, dict[str, str]] = {}
    if path.exists():
        for row in csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))):
            if row.get("run_id"):
                rows[row["run_id"]] = {k: row.get(k) or "" for k in LABEL_COLUMNS}
    what = decisive.corrected or {}
    fix = (what.get("tool") and f"{what['tool']}({what.get('arguments')})") or what.get("content")
    rows[found.run_id] = {
        "run_id": found.run_id,
        "agent": decisive.agent,
        "step": str(decisive.step),
        "mode": "",
        "reason": f"counterfactual replay: corrected to {fix!s:.200}, the run succeeds",
    }
    out = io.StringIO()
    writer = csv.DictWriter(out, LABEL_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows[k] for k in sorted(rows))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(out.getvalue(), encoding="utf-8")
