"""The Magentic-One-style ledger orchestrator every benchmark's ledger policy shares: who
speaks when, the ledger's JSON, the plan that names the team, the instruction read back.

The Orchestrator writes its plan, then before every worker turn an updated progress ledger
(is the request satisfied, are we in a loop, is progress being made, who speaks next and
with what instruction), the instruction to that worker (`To <worker>: ...`) and sometimes
a `Next speaker` note; the worker takes one action and the Orchestrator updates the ledger
again. When the ledger says the request is satisfied, the Orchestrator's next step is the
final answer (`FINAL ANSWER: ...`) or, where a worker must finish the task (a checkout),
the instruction to do so.

The team's coder (named Assistant, as in the recorded runs) writes a Python script into
its message when the ledger asks for one; the ledger then names the ComputerTerminal,
and the Orchestrator's instruction to it runs the script (`ComputerTerminal`, a tool:
its output is an observation, as Who&When's importer reads the recorded terminal).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from whowhen.agents.phrasing import Form, chance
from whowhen.agents.scripted import ScriptedSystem, addressee, tell
from whowhen.runtime import Action, Step
from whowhen.tools import LEDGER_TERMINAL

LEDGER_HEAD = "Updated Ledger:\n"
NEXT_SPEAKER = "Next speaker "
ORCHESTRATOR = "Orchestrator"
FINAL_ANSWER = "FINAL ANSWER: "
CODER = "Assistant"
TERMINAL = LEDGER_TERMINAL
TEAM = (
    ("WebSurfer", "a helpful assistant with access to a web browser: it can search, open "
     "pages, click links, buttons and options, and report what the page shows."),
    ("FileSurfer", "a helpful assistant that can search local files and documents and "
     "open them to read."),
    ("Assistant", "a helpful AI assistant, the team's coder: it writes Python scripts to "
     "analyse or compute."),
    ("ComputerTerminal", "a terminal that runs the Python scripts the Assistant writes."),
)  # fmt: skip
"""The team a Magentic-One orchestrator is given, as its initial plan lists it."""
SATISFIED = "The request is answered; only the last step is left."
NEXT_STEP = "This is the next step towards the answer."


def initial_plan(request: str, steps: Sequence[str]) -> str:
    """The Orchestrator's first message: the request, the team, the plan."""
    team = "\n".join(f"{name}: {role}" for name, role in TEAM)
    plan = "\n".join(f"- {step}" for step in steps)
    return (
        "Initial plan:\n\nWe are working to address the following user request:\n\n"
        f"{request}\n\nTo answer this request we have assembled the following team:\n\n"
        f"{team}\n\nHere is the plan to follow as best as possible:\n\n{plan}"
    )


class Instructions:
    """A ledger's instructions, one template per worker tool, read back with the phrasing
    forms every policy uses (`agents.phrasing.Form`)."""

    def __init__(self, templates: dict[str, str], **patterns: str) -> None:
        self.forms = {
            tool: Form(f"ledger.{tool}", (text,), **patterns) for tool, text in templates.items()
        }

    def read(self, text: str) -> tuple[str, dict[str, str]] | None:
        """(tool, arguments) an instruction asks for, or None."""
        for tool, form in self.forms.items():
            found = form.fields(text.strip())
            if found is not None:
                return tool, found
        return None


def ledger_text(fields: dict[str, tuple[str, object]]) -> str:
    """The ledger as Magentic-One writes it: each question with its reason and answer."""
    body = {k: {"reason": reason, "answer": answer} for k, (reason, answer) in fields.items()}
    return LEDGER_HEAD + json.dumps(body, indent=2)


def read_ledger(step: Step) -> dict[str, object] | None:
    """Question -> answer of an Orchestrator's ledger step, or None for another step."""
    body = ledger_body(step)
    if body is None:
        return None
    return {k: v.get("answer") for k, v in body.items() if isinstance(v, dict)}


def ledger_body(action: Action | Step) -> dict | None:
    """The JSON body of an Orchestrator's ledger step (None for any other step)."""
    if action.actor != ORCHESTRATOR or not action.content.startswith(LEDGER_HEAD):
        return None
    try:
        body = json.loads(action.content.removeprefix(LEDGER_HEAD))
    except json.JSONDecodeError:
        return None
    return body if isinstance(body, dict) else None


def satisfied_ledger(body: dict, said: str) -> Action:
    """`body` re-said as a ledger that declares the request satisfied with `said` (the
    final answer or the finishing instruction), in the words of a true one: a wording of
    its own would tell an injected step from the rest."""
    body = {**body, "is_request_satisfied": {"reason": SATISFIED, "answer": True}}
    body["instruction_or_question"] = {"reason": NEXT_STEP, "answer": said}
    return Action(ORCHESTRATOR, LEDGER_HEAD + json.dumps(body, indent=2))


def last_ledger(history: Sequence[Step]) -> tuple[int, dict[str, object]] | None:
    """(index, answers) of the Orchestrator's last ledger, or None before its first."""
    for i in range(len(history) - 1, -1, -1):
        found = read_ledger(history[i])
        if found is not None:
            return i, found
    return None


def instruction_to(history: Sequence[Step], worker: str) -> str:
    """The text of the Orchestrator's last instruction to `worker` ('' if none)."""
    for step in reversed(history):
        if step.actor == ORCHESTRATOR and addressee(step) == worker:
            return step.content.split(":", 1)[1].strip()
    return ""


def progress(history: Sequence[Step]) -> tuple[str, bool]:
    """Whether the last action showed something to work from, with the reason."""
    last = next((s for s in reversed(history) if s.kind == "observation"), None)
    if last is None:
        return "We have not acted yet; the first step starts the work.", True
    failed = last.content.startswith(("Error", "No results", "No document"))
    if failed or last.content.startswith("The script ran, then exited with Unix exit code: 1"):
        return "The last action gave nothing to work with; we change approach.", False
    return "The last action showed something new that we can work from.", True


_SCRIPT = re.compile(r"```python\n(.*?)\n```", re.S)


def script_in(step: Step | Action) -> str | None:
    """The Python script a coder's message holds, or None."""
    found = _SCRIPT.search(step.content) if step.actor == CODER else None
    return found.group(1) if found else None


def last_script(history: Sequence[Step]) -> str:
    """The coder's most recent script ('' if it wrote none)."""
    for step in reversed(history):
        if (script := script_in(step)) is not None:
            return script
    return ""


def ledger_step(
    history: Sequence[Step], done: bool, worker: str, said: str, why: str = NEXT_STEP
) -> Action:
    """The Orchestrator's ledger before a worker's turn (`done`: the request is satisfied,
    and `said` is the final answer or the finishing instruction)."""
    reason, moving = progress(history)
    fields: dict[str, tuple[str, object]] = {
        "is_request_satisfied": (SATISFIED if done else "The request is not answered yet.", done),
        "is_in_loop": ("We are not repeating the same requests.", False),
        "is_progress_being_made": (reason, moving),
        "next_speaker": (f"The next step is {worker}'s.", worker),
        "instruction_or_question": (why, said),
    }
    return Action(ORCHESTRATOR, ledger_text(fields))


class ScriptedLedger(ScriptedSystem):
    """The ledger orchestrator's turn-taking. Subclasses implement `plan(history)`,
    `ledger(history)` (the ledger step, naming the next speaker and the instruction, or
    the final answer once the request is satisfied) and `work(worker, history)` (the
    worker's action, from its last instruction); `instruct` passes the ledger's
    instruction on, or gives its final answer."""

    name, topology = "ledger", "multi"
    agents: tuple[str, ...] = (ORCHESTRATOR, "WebSurfer")
    orchestrator = ORCHESTRATOR
    next_speaker_p = 0.5

    def plan(self, history: Sequence[Step]) -> Action:
        raise NotImplementedError

    def ledger(self, history: Sequence[Step]) -> Action:
        raise NotImplementedError

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        raise NotImplementedError

    def instruct(self, history: Sequence[Step]) -> Action:
        found = last_ledger(history)
        answers = found[1] if found is not None else {}
        said = str(answers.get("instruction_or_question") or "")
        if said.startswith(FINAL_ANSWER):
            answer = said.removeprefix(FINAL_ANSWER).strip()
            return Action(ORCHESTRATOR, said, "final_answer", {"answer": answer})
        who = str(answers.get("next_speaker") or self.agents[1])
        if who == TERMINAL:  # the instruction runs the script (a tool, not an agent)
            code = last_script(history)
            return Action(ORCHESTRATOR, f"To {TERMINAL}: {said}", TERMINAL, {"code": code})
        return tell(ORCHESTRATOR, who if who in self.agents else self.agents[1], said)

    def decide(self, history: Sequence[Step]) -> Action:
        agent_steps = [s for s in history if s.is_agent_step]
        if not agent_steps:
            return self.plan(history)
        last = agent_steps[-1]
        if last.actor != self.orchestrator or last.tool == TERMINAL:
            return self.ledger(history)
        if last.content.startswith(NEXT_SPEAKER):
            return self.work(last.content.removeprefix(NEXT_SPEAKER).strip(), history)
        to = addressee(last)
        if to is None:  # the plan, or a ledger: the instruction comes next
            return self.ledger(history) if len(agent_steps) == 1 else self.instruct(history)
        if chance(history, "ledger.next_speaker", self.next_speaker_p):
            return Action(self.orchestrator, f"{NEXT_SPEAKER}{to}")
        return self.work(to, history)
