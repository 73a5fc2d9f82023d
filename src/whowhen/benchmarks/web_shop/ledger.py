"""The ledger orchestrator on the web shop, shaped like the Magentic-One runs that
Who&When's Hand-Crafted set comes from.

The Orchestrator writes an initial plan naming its team (WebSurfer, FileSurfer, Coder,
ComputerTerminal), then before every WebSurfer turn an updated ledger: whether the request
is satisfied, whether the team is in a loop, whether progress is being made, the next
speaker and the instruction; it passes the instruction on (`To WebSurfer: ...`, at times
after a `Next speaker WebSurfer` note) and the WebSurfer carries it out with one browser
action (typing a search, clicking an item, a button or an option, adding to the cart,
checking out). On some tasks the Orchestrator has the Assistant (the team's coder) write
a script that checks the reported item, and the ComputerTerminal run it
(`ledger_code`). Every decision is the Orchestrator's: the next move is worked out from the
pages seen so far as a lone shopper would (`next_move`) and written into the ledger; the
instruction copies the ledger; the WebSurfer does what the instruction says. So a wrong
ledger, a distorted instruction or a wrong click each carries on to the purchase.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from whowhen.agents.ledger import (
    CODER,
    ORCHESTRATOR,
    TERMINAL,
    Instructions,
    ScriptedLedger,
    initial_plan,
    instruction_to,
    ledger_step,
)
from whowhen.agents.phrasing import task_chance
from whowhen.benchmarks.web_shop.actions import SCAN
from whowhen.benchmarks.web_shop.belief import spec_of
from whowhen.benchmarks.web_shop.ledger_code import (
    ASK_SCRIPT,
    FITS,
    FIX,
    RUN,
    uses_code,
    verdict,
    write_script,
)
from whowhen.benchmarks.web_shop.pages import Item, added, cart, current_page, product
from whowhen.benchmarks.web_shop.policies import (
    VIEW_CART_P,
    cart_matches,
    configure,
    find_item,
)
from whowhen.runtime import Action, Step

SURFER = "WebSurfer"
INSTRUCTIONS = {
    "search": "Please type '{query}' into the shop's search box and run the search.",
    "click": "Please click '{target}' on the current page.",
    "select_option": "Please select {value} for the {name} option of the open item.",
    "add_to_cart": "Please click 'Add to cart' for the open item.",
    "checkout": "Please click 'Checkout' to place the order with the cart as it is.",
}
"""Tool -> the Orchestrator's instruction that asks the WebSurfer for that action."""
ASK_REPORT = "Please report the price of the open item and the options it offers."
REPORT = "The open item is [{item}] {name} at {price}; it offers {offers}."
_REPORT = re.compile(
    r"^The open item is \[(?P<item>P\d+)\] (?P<name>.+) at \$(?P<d>\d+)\.(?P<c>\d\d); "
    r"it offers (?P<offers>.+)\.$"
)
DONE_BY = {
    "search": "I typed '{query}' into the shop's search box.",
    "click": "I clicked '{target}'.",
    "select_option": "I selected {value} for the {name} option.",
    "add_to_cart": "I clicked 'Add to cart'.",
    "checkout": "I clicked 'Checkout'.",
}
"""Tool -> how the WebSurfer reports the action it took (the page comes as an observation)."""
_ASKED = Instructions(INSTRUCTIONS, value=r"\w+", name=r"\w+")


def instruction(move: Action) -> str:
    """The instruction that asks for `move` (a WebSurfer action, or a report)."""
    if move.tool is None:
        return move.content
    return INSTRUCTIONS[str(move.tool)].format(**(move.tool_args or {}))


def read_instruction(text: str) -> tuple[str, dict[str, str]] | None:
    """(tool, arguments) an instruction asks for, or None."""
    return _ASKED.read(text)


def report_text(item: Item) -> str:
    offers = "; ".join(f"{k} {', '.join(v)}" for k, v in item.options) or "no options"
    return REPORT.format(item=item.item_id, name=item.name, price=item.price, offers=offers)


def read_report(text: str) -> Item | None:
    """The item a WebSurfer's report describes (as the Orchestrator takes it), or None."""
    m = _REPORT.match(text)
    if m is None:
        return None
    options = tuple(
        (name, tuple(v.strip() for v in values.split(",")))
        for part in m.group("offers").split("; ")
        if (name_values := part.split(" ", 1)) and len(name_values) == 2
        for name, values in [name_values]
    )
    cents = int(m.group("d")) * 100 + int(m.group("c"))
    return Item(m.group("item"), m.group("name"), cents, options)


def reported(history: Sequence[Step], since: int) -> Item | None:
    """The WebSurfer's last report after index `since` (None if it made none)."""
    for step in reversed(history[since:]):
        if step.actor == SURFER and step.tool is None and (item := read_report(step.content)):
            return item
    return None


def next_move(history: Sequence[Step]) -> Action:
    """The WebSurfer action the task needs next, worked out from the pages seen and the
    WebSurfer's reports: on a newly opened item, a report of its price and options first
    (the Orchestrator then trusts the report, not the page); find an item that offers what
    is wanted, set its options, add it, look at the cart (a careful Orchestrator, a draw
    per task), remove a line that is not what is wanted, check out (also when nothing
    fits). A report (no tool) is asked for with its own instruction."""
    spec = spec_of(history)
    page, lines = current_page(history), cart(history)
    if page is not None and page.kind == "product" and not added(history, page.index):
        item = reported(history, page.index)
        if item is None:
            return Action(SURFER, ASK_REPORT)
        fits = item.offers(spec.want)
        if uses_code(history):  # the script's verdict decides, not the report
            state, said = verdict(history, page.index)
            if state == "ask":
                return Action(CODER, ASK_SCRIPT)
            if state == "run":
                return Action(TERMINAL, RUN)
            if state == "error":
                return Action(CODER, FIX.at(0, error=said))
            fits = said == FITS
        if not fits:
            return Action(SURFER, "", "click", {"target": "back"})
        return configure_move(history, page.index, item)
    if page is not None and page.kind == "cart" and lines:
        if cart_matches(lines, spec):
            return Action(SURFER, "", "checkout", {})
        return Action(SURFER, "", "click", {"target": f"remove {lines[0][0].item_id}"})
    found = find_item(SURFER, history, 0, spec)
    if found is None:
        return Action(SURFER, "", "checkout", {})
    if isinstance(found, Action):
        return Action(SURFER, "", found.tool, found.tool_args)
    assert page is not None
    if added(history, page.index):
        if task_chance(history, "shop.careful", VIEW_CART_P):
            return Action(SURFER, "", "click", {"target": "cart"})
        return Action(SURFER, "", "checkout", {})
    move = configure(SURFER, history, page.index, found, spec)
    return Action(SURFER, "", move.tool, move.tool_args)


def configure_move(history: Sequence[Step], since: int, item: Item) -> Action:
    """The WebSurfer's next option to select on the item opened at `since`, or the add."""
    move = configure(SURFER, history, since, item, spec_of(history))
    return Action(SURFER, "", move.tool, move.tool_args)


class ShopLedgerSystem(ScriptedLedger):
    agents = (ORCHESTRATOR, SURFER, CODER)

    def plan(self, history: Sequence[Step]) -> Action:
        spec = spec_of(history)
        steps = (
            f"WebSurfer searches the shop for the {spec.noun} and opens a result under "
            f"${spec.cap}.",
            f"WebSurfer checks that the item offers {spec.options}, selects them and adds "
            "it to the cart.",
            "We look at the cart if needed, then WebSurfer checks out.",
        )
        request = f"Buy {spec.article} {spec.desc} for less than ${spec.cap}."
        return Action(ORCHESTRATOR, initial_plan(request, steps))

    def ledger(self, history: Sequence[Step]) -> Action:
        move = next_move(history)
        return ledger_step(history, move.tool == "checkout", move.actor, instruction(move))

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        text = instruction_to(history, worker)
        if worker == CODER:
            page = current_page(history)
            item = reported(history, page.index) if page is not None else None
            if item is None:
                return Action(CODER, f"To {ORCHESTRATOR}: there is no reported item to check.")
            return write_script(history, item, spec_of(history))
        if text == ASK_REPORT:
            page = current_page(history)
            item = product(page.text) if page is not None and page.kind == "product" else None
            if item is not None:
                return Action(SURFER, report_text(item))
        found = read_instruction(text)
        if found is None:  # an instruction it cannot carry out: it says so
            return Action(SURFER, f"To {ORCHESTRATOR}: I cannot do that in the browser.")
        tool, args = found
        text = DONE_BY[tool].format(**args)
        if tool == "click" and args["target"] == "next" and not _clicked_since_search(history):
            text = SCAN.say(history, **spec_of(history).target())  # a first look, then back
        return Action(SURFER, text, tool, args)


def _clicked_since_search(history: Sequence[Step]) -> bool:
    searched = [i for i, s in enumerate(history) if s.actor == SURFER and s.tool == "search"]
    return bool(searched) and any(
        s.actor == SURFER and s.tool == "click" for s in history[searched[-1] :]
    )
