"""Error operators for the ledger orchestrator's steps on the web shop: the failure shapes
of Magentic-One runs, each under the taxonomy mode it is an instance of.

- a fact stated that no page supports: the WebSurfer reports that the open item offers the
  wanted option (perception.misread_value); the Orchestrator trusts the report, the shop
  refuses the option, and the team repeats the selection until the step budget is spent;
- a wrong element followed: the WebSurfer selects the option value next to the one it was
  told (action.wrong_tool_argument);
- a premature stop: a ledger declares the request satisfied and has the cart checked out
  before the item is in it (planning.premature_finish);
- a distorted instruction: the message to the WebSurfer names another option value than
  the ledger (coordination.distorted_handoff);
- a verification that checks nothing: the ledger that should have a wrong cart line
  removed declares the cart right and has it checked out (verification.false_approval);
- a stale ledger: after the item went into the cart, the Orchestrator writes its previous
  ledger again, as if the WebSurfer's action had not happened, and the item is added twice
  (coordination.ignored_message).

- a logic bug in the Assistant's check script: `any` for `all`, so an item that offers
  one of the wanted values passes (reasoning.logic_bug); the team then selects an option
  the item does not offer, the shop refuses, and the team selects again and again;
- an ignored tool error: the check script failed, and the ledger goes on to configure the
  item instead of having the script fixed (verification.false_approval: the check that
  should decide was skipped).

A repeated action loop is also where an unsupported offer leads: the shop refuses the
selection, and the team selects again and again.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from whowhen.agents.ledger import (
    CODER,
    ORCHESTRATOR,
    ledger_body,
    ledger_step,
    satisfied_ledger,
    script_in,
)
from whowhen.agents.scripted import addressee, tell
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.web_shop.belief import spec_of
from whowhen.benchmarks.web_shop.ledger import (
    DONE_BY,
    INSTRUCTIONS,
    SURFER,
    configure_move,
    instruction,
    read_instruction,
    read_report,
    report_text,
    reported,
)
from whowhen.benchmarks.web_shop.ledger_code import FIX, check_script
from whowhen.benchmarks.web_shop.pages import Item, current_page, product
from whowhen.runtime import Action, Step


def _neighbour_value(
    history: Sequence[Step], name: str, value: str, rng: random.Random
) -> str | None:
    """Another value of option `name` that the open item lists next to `value`."""
    page = current_page(history)
    item = product(page.text) if page is not None and page.kind == "product" else None
    values = list(dict(item.options).get(name, ())) if item is not None else []
    if value not in values:
        return None
    i = values.index(value)
    near = [values[j] for j in (i - 1, i + 1) if 0 <= j < len(values)]
    return rng.choice(near) if near else None


@covers("ledger")
def unsupported_offer(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """perception.misread_value: the report says the open item offers the wanted colour
    and size when the page lists another."""
    item = read_report(action.content) if action.actor == SURFER and action.tool is None else None
    if item is None:
        return None
    spec = spec_of(history)
    if item.offers(spec.want):
        return None
    options = dict(item.options)
    for name, value in spec.want:
        values = list(options.get(name, ()))
        if value not in values:  # listed where the page could have listed it
            values.insert(rng.randrange(len(values) + 1), value)
        options[name] = tuple(values)
    claimed = Item(item.item_id, item.name, item.cents, tuple(options.items()))
    return Action(SURFER, report_text(claimed))


@covers("ledger")
def wrong_option(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """action.wrong_tool_argument: the WebSurfer selects the neighbouring option value."""
    if action.actor != SURFER or action.tool != "select_option":
        return None
    args = dict(action.tool_args or {})
    other = _neighbour_value(history, str(args.get("name")), str(args.get("value")), rng)
    if other is None:
        return None
    args["value"] = other
    return Action(SURFER, DONE_BY["select_option"].format(**args), "select_option", args)


def _asked(body: dict) -> tuple[str, dict[str, str]] | None:
    said = body.get("instruction_or_question", {})
    return read_instruction(str(said.get("answer", ""))) if isinstance(said, dict) else None


@covers("ledger")
def early_checkout(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """planning.premature_finish: while an option is still to set or the item to add, the
    ledger declares the request satisfied and asks for the checkout."""
    body = ledger_body(action)
    asked = _asked(body) if body is not None else None
    if body is None or asked is None or asked[0] not in ("select_option", "add_to_cart"):
        return None
    return satisfied_ledger(body, INSTRUCTIONS["checkout"])


@covers("ledger")
def trusted_cart(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """verification.false_approval: the ledger that asks for a wrong cart line to be removed
    declares the cart right instead, without comparing it with the request."""
    body = ledger_body(action)
    asked = _asked(body) if body is not None else None
    if body is None or asked is None or asked[0] != "click":
        return None
    if not asked[1].get("target", "").startswith("remove "):
        return None
    return satisfied_ledger(body, INSTRUCTIONS["checkout"])


@covers("ledger")
def distorted_instruction(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> Action | None:
    """coordination.distorted_handoff: the instruction passed to the WebSurfer names the
    neighbouring option value instead of the one in the ledger."""
    if action.actor != ORCHESTRATOR or addressee(Step(0, "", "message", action.content)) != SURFER:
        return None
    asked = read_instruction(action.content.split(":", 1)[1])
    if asked is None or asked[0] != "select_option":
        return None
    args = dict(asked[1])
    other = _neighbour_value(history, args["name"], args["value"], rng)
    if other is None:
        return None
    said = INSTRUCTIONS["select_option"].format(**{**args, "value": other})
    return tell(ORCHESTRATOR, SURFER, said)


@covers("ledger")
def stale_ledger(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """coordination.ignored_message: the ledger after an item went into the cart repeats
    the ledger before it word for word (add the item to the cart)."""
    if ledger_body(action) is None:
        return None
    acted = next((s for s in reversed(history) if s.actor == SURFER), None)
    if acted is None or acted.tool != "add_to_cart":
        return None
    before = next((s for s in reversed(history[: acted.step]) if ledger_body(s) is not None), None)
    if before is None:
        return None
    return Action(ORCHESTRATOR, before.content)


@covers("ledger")
def any_option_passes(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    """reasoning.logic_bug: the check script tests that any wanted value is offered, not
    every one."""
    if script_in(action) is None:
        return None
    page = current_page(history)
    item = reported(history, page.index) if page is not None else None
    if item is None:
        return None
    head = action.content.split("\n```python", 1)[0]
    code = check_script(item, spec_of(history), any_option=True)
    return Action(CODER, f"{head}\n```python\n{code}\n```")


@covers("ledger")
def failed_check_passed(
    action: Action, rng: random.Random, history: Sequence[Step]
) -> Action | None:
    """verification.false_approval: the ledger that should send the failed script back
    to be fixed goes on to configure the item as if the check had passed."""
    body = ledger_body(action)
    said = body.get("instruction_or_question", {}) if body is not None else {}
    asked = str(said.get("answer", "")) if isinstance(said, dict) else ""
    if FIX.fields(asked) is None:
        return None
    page = current_page(history)
    item = reported(history, page.index) if page is not None else None
    if page is None or item is None:
        return None
    move = configure_move(history, page.index, item)
    return ledger_step(history, False, SURFER, instruction(move))


OPERATORS = {
    "perception.misread_value": unsupported_offer,
    "action.wrong_tool_argument": wrong_option,
    "planning.premature_finish": early_checkout,
    "coordination.distorted_handoff": distorted_instruction,
    "verification.false_approval": (trusted_cart, failed_check_passed),
    "coordination.ignored_message": stale_ledger,
    "reasoning.logic_bug": any_option_passes,
}
"""Taxonomy mode -> the ledger orchestrator's operator for it."""
