"""Error operators for the ledger orchestrator's steps on document QA, each under the
taxonomy mode it is an instance of:

- a premature stop: a ledger declares the request satisfied and gives the subject of the
  current hop as the final answer, before the chain is done (planning.premature_finish);
- a distorted instruction: the message to the FileSurfer names another hit of its last
  search than the ledger did (coordination.distorted_handoff), which the FileSurfer reads
  as the hop's subject.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

from whowhen.agents.ledger import FINAL_ANSWER, LEDGER_HEAD, NEXT_STEP, ORCHESTRATOR, SATISFIED
from whowhen.agents.scripted import addressee, tell
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.doc_qa.actions import hits
from whowhen.benchmarks.doc_qa.ledger import FILES, INSTRUCTIONS, read_instruction
from whowhen.runtime import Action, Step


def _ledger(action: Action) -> dict | None:
    if action.actor != ORCHESTRATOR or not action.content.startswith(LEDGER_HEAD):
        return None
    try:
        body = json.loads(action.content.removeprefix(LEDGER_HEAD))
    except json.JSONDecodeError:
        return None
    return body if isinstance(body, dict) else None


@covers("ledger")
def early_answer(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """planning.premature_finish: while the FileSurfer is still to read a hop's document,
    the ledger declares the request satisfied and answers with that hop's subject."""
    body = _ledger(action)
    said = body.get("instruction_or_question", {}) if body is not None else {}
    asked = read_instruction(str(said.get("answer", ""))) if isinstance(said, dict) else None
    if body is None or asked is None or asked[0] != "read":
        return None
    subject = asked[1]["title"]
    body = {**body, "is_request_satisfied": {"reason": SATISFIED, "answer": True}}
    body["instruction_or_question"] = {"reason": NEXT_STEP, "answer": f"{FINAL_ANSWER}{subject}"}
    return Action(ORCHESTRATOR, LEDGER_HEAD + json.dumps(body, indent=2))


@covers("ledger")
def distorted_instruction(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> Action | None:
    """coordination.distorted_handoff: the FileSurfer is told to open another hit of its
    last search than the one the ledger named."""
    if action.actor != ORCHESTRATOR or addressee(Step(0, "", "message", action.content)) != FILES:
        return None
    asked = read_instruction(action.content.split(":", 1)[1])
    if asked is None or asked[0] != "read":
        return None
    last = next((s for s in reversed(history) if s.kind == "observation"), None)
    others = [t for t in hits(last.content) if t != asked[1]["title"]] if last else []
    if not others:
        return None
    return tell(ORCHESTRATOR, FILES, INSTRUCTIONS["read"].format(title=rng.choice(others[:3])))


OPERATORS = {
    "planning.premature_finish": early_answer,
    "coordination.distorted_handoff": distorted_instruction,
}
"""Taxonomy mode -> the ledger orchestrator's operator for it."""
