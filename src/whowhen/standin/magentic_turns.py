"""The stand-in playing the ledger team inside autogen-agentchat's `MagenticOneGroupChat`.

Magentic-One asks its Orchestrator's model with its own prompts (the facts pre-survey, the
plan, the progress ledger as JSON, the final answer) and its workers with their role
prompts and the team's thread. Neither holds the scripted ledger's steps as such: the
Orchestrator's context has its instructions but not its ledgers, a worker's tool call
shows as `tool(arguments)` and the page it returned. So the run is rebuilt in the
scripted ledger's form (`history`): the task, the plan the reference policy writes, and
for every instruction the ledger it comes from (re-derived from the run so far, as the
policy would have written it) and the instruction to whoever answered it. The reference
policy then gives the asked agent's next step:
- the progress ledger: the policy's ledger, its JSON as Magentic-One asks for it (a
  ledger the policy marks satisfied while a worker still has to finish, a checkout, is
  not satisfied yet here: Magentic-One would go to its final answer instead);
- the plan: the policy's plan's bullet points; the facts: the request read back;
- a worker's turn: the policy's step for that worker after its instruction.
"""

from __future__ import annotations

import json
import re
from typing import Any

from whowhen.agents.ledger import (
    FINAL_ANSWER,
    ORCHESTRATOR,
    TERMINAL,
    last_script,
    ledger_body,
    ledger_step,
)
from whowhen.agents.scripted import tell
from whowhen.models.scripted_provider import ACTION_LINE, TURNS
from whowhen.runtime import Action, Step

FULL_LEDGER = "Here is the plan to follow as best as possible:"
_REQUEST = re.compile(
    r"We are working to address the following user request:\n\n(.*?)\n\n\nTo answer this "
    r"request we have assembled the following team:",
    re.S,
)
_FACTS_REQUEST = re.compile(r"Here is the request:\n\n(.*?)\n\nHere is the pre-survey:", re.S)
PROMPTS = {
    "facts": "Here is the pre-survey:",
    "plan": "please devise a short bullet-point plan for addressing the original request",
    "ledger": "Please output an answer in pure JSON format according to the following schema.",
    "final": "Based on the information gathered, provide the final answer to the original request.",
}
"""Which of Magentic-One's Orchestrator prompts a request ends with, by a phrase of it."""
MANAGER = "MagenticOneOrchestrator"
"""The name Magentic-One's Orchestrator speaks under in the workers' threads."""
_NAMES = (MANAGER, "Orchestrator", "WebSurfer", "FileSurfer", "Assistant", TERMINAL)
_ANY = "|".join(_NAMES)
_BLOCK = re.compile(rf"\n(?=\[(?:{_ANY})\]: |Observation \([\w-]+\): )")
_NAMED = re.compile(rf"^\[({_ANY})\]: ")
_CALLED = re.compile(r"^(\w+)\((\{.*?\})\)\n", re.S)

Event = tuple[str, str, str, Any]
"""(kind, speaker, text, tool call): kind is `said`, `called` (a worker's tool call, the
call as (tool, args)) or `saw` (a tool's result; speaker is the tool)."""


def is_magentic(prompt: str) -> bool:
    return FULL_LEDGER in prompt or PROMPTS["facts"] in prompt


def asked(prompt: str) -> str:
    """`facts`, `plan`, `ledger`, `final` (the Orchestrator's prompt the request ends
    with: the latest of them in it) or `worker` (no Orchestrator prompt at all)."""
    where = {kind: prompt.rfind(phrase) for kind, phrase in PROMPTS.items()}
    kind = max(where, key=lambda k: where[k])
    return kind if where[kind] >= 0 else "worker"


def request_text(prompt: str) -> str | None:
    found = _REQUEST.search(prompt) or _FACTS_REQUEST.search(prompt)
    return found.group(1) if found else None


def events(prompt: str, me: str) -> list[Event]:
    """The team's thread after the task ledger, in order, from the flattened request of
    `me` (whose own turns come unnamed)."""
    start = prompt.find(FULL_LEDGER)
    rest = prompt[start:].split("\n", 1)[1] if start >= 0 and "\n" in prompt[start:] else ""
    out: list[Event] = []
    for k, piece in enumerate(TURNS.split(rest)):
        if k % 2:
            named = _NAMED.match(piece)
            _read_block(piece if named else f"[{me}]: {piece}", out)
            continue
        for block in _BLOCK.split(piece):
            _read_block(block.strip("\n"), out)
    return out


def _read_block(block: str, out: list[Event]) -> None:
    if m := re.match(r"Observation \(([\w-]+)\): ", block):
        out.append(("saw", m[1], block[m.end() :], None))
        return
    named = _NAMED.match(block)
    if named is None:
        return  # the system prompt, the plan's tail, or the prompt Magentic-One asks with
    who, text = named[1], block[named.end() :]
    who = ORCHESTRATOR if who == MANAGER else who
    if any(phrase in text for phrase in PROMPTS.values()):
        return
    if who == TERMINAL:
        out.append(("saw", TERMINAL, text, None))
        return
    calls = list(ACTION_LINE.finditer(text))
    if calls:  # a worker's own turn, with its native tool calls
        for call in calls:
            out.append(("called", who, "", (call[1], _args(call[2]))))
        return
    if who != ORCHESTRATOR and (m := _CALLED.match(text)):  # a call as the thread shows it
        out.append(("called", who, "", (m[1], _args(m[2]))))
        out.append(("saw", m[1], text[m.end() :], None))
        return
    out.append(("said", who, text, None))


def _args(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def history(task: str, thread: list[Event], me: str, policy: Any) -> list[Step]:
    """The run in the scripted ledger's steps (see the module's docstring)."""
    steps: list[Step] = [Step(0, "user", "message", task)]

    def add(action: Action, kind: str | None = None) -> None:
        kind = kind or ("message" if action.tool is None else "action")
        steps.append(Step(len(steps), action.actor, kind, action.content, action.tool,
                          action.tool_args))  # fmt: skip

    def instruct(text: str, to: str) -> None:
        add(ledger_step(steps, False, to, text))
        if to == TERMINAL:
            add(Action(ORCHESTRATOR, f"To {TERMINAL}: {text}", TERMINAL,
                       {"code": last_script(steps)}))  # fmt: skip
        else:
            add(tell(ORCHESTRATOR, to, text))

    add(policy.plan(steps))
    pending: str | None = None
    for kind, who, text, call in thread:
        if kind == "said" and who == ORCHESTRATOR:
            pending = text
            continue
        if pending is not None:
            instruct(pending, who if kind != "saw" or who == TERMINAL else me)
            pending = None
        if kind == "called":
            add(Action(who, _said_with(policy, who, steps, call), call[0], call[1]))
        elif kind == "saw":
            steps.append(Step(len(steps), who, "observation", text))
        else:
            add(Action(who, text))
    if pending is not None:
        instruct(pending, me)
    return steps


def _said_with(policy: Any, who: str, steps: list[Step], call: tuple[str, dict]) -> str:
    """What a worker said with its tool call, which the thread does not show: the
    policy's words where the call is the policy's (a scan of a results page is told from
    a plain click by them), else nothing."""
    mine = policy.work(who, steps)
    return mine.content if (mine.tool, mine.tool_args) == call else ""


def magentic_turn(prompt: str, role: tuple[str, str, str] | None, policy: Any) -> Action | str:
    """The stand-in's answer to a Magentic-One request: text for the Orchestrator's
    prompts, the worker's action for a worker's turn (`role`: the role whose prompt the
    request holds; `policy`: the reference policy of that system and benchmark)."""
    kind = asked(prompt)
    task = request_text(prompt) or ""
    if kind == "facts":
        return _facts(task)
    me = role[2] if role is not None and kind == "worker" else ORCHESTRATOR
    steps = history(task, events(prompt, me), me, policy)
    if kind == "plan":
        plan = steps[1].content
        return plan[plan.find(FULL_LEDGER) + len(FULL_LEDGER) :].strip()
    if kind == "worker":
        return policy.work(me, steps)
    body = ledger_body(policy.ledger(steps)) or {}
    said = str((body.get("instruction_or_question") or {}).get("answer", ""))
    if kind == "final":
        return said.removeprefix(FINAL_ANSWER).strip() or "The request is done."
    if said and not said.startswith(FINAL_ANSWER):  # a worker finishes it: not done yet
        body["is_request_satisfied"] = {**body["is_request_satisfied"], "answer": False}
    return json.dumps(body, indent=2)


def _facts(task: str) -> str:
    request = task.strip().splitlines()[-1] if task.strip() else "the request"
    return (
        f"1. GIVEN OR VERIFIED FACTS\n- {request}\n\n2. FACTS TO LOOK UP\n- What the pages "
        "or files show for the request.\n\n3. FACTS TO DERIVE\n- Whether a candidate meets "
        "every condition of the request.\n\n4. EDUCATED GUESSES\n- None yet."
    )
