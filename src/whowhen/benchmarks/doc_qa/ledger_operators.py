"""Error operators for the ledger orchestrator's steps on document QA, each under the
taxonomy mode it is an instance of:

- a premature stop: a ledger declares the request satisfied and gives the subject of the
  current hop as the final answer, before the chain is done (planning.premature_finish);
- a distorted instruction: the message to the FileSurfer names another hit of its last
  search than the ledger did (coordination.distorted_handoff), which the FileSurfer reads
  as the hop's subject.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from whowhen.agents.ledger import FINAL_ANSWER, ORCHESTRATOR, ledger_body, satisfied_ledger
from whowhen.agents.scripted import addressee, tell
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.doc_qa.actions import hits
from whowhen.benchmarks.doc_qa.ledger import FILES, INSTRUCTIONS, read_instruction
from whowhen.runtime import Action, Step


@covers("ledger")
def early_answer(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """planning.premature_finish: while the FileSurfer is still to read a hop's document,
    the ledger declares the request satisfied and answers with that hop's subject."""
    body = ledger_body(action)
    said = body.get("instruction_or_question", {}) if body is not None else {}
    asked = read_instruction(str(said.get("answer", ""))) if isinstance(said, dict) else None
    if body is None or asked is None or asked[0] != "read":
        return None
    return satisfied_ledger(body, f"{FINAL_ANSWER}{asked[1]['title']}")


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
