"""The expert group chat on the web shop: a web-lookup chat shaped like the AG2 group chats
that Who&When's Algorithm-Generated runs come from.

The Python_Expert states the target (colour, product word, size, budget) and looks it up
with a program over the shop's catalogue file, run by the `Computer_terminal` (an
observation, as AG2's executor prints it): the products with the product word that offer
the wanted options, each with its price and whether it is under the budget. On some tasks
it first looks at the file's layout; on some its first lookup reads the options at the top
level, the terminal reports the KeyError, and it fixes the program. On others the lookup
forgets the budget: the Verification_Expert, who reads the program and its output, sends
it back. Otherwise the verifier picks the line under the budget and hands the item over.
The WebNavigation_Expert buys it with the shop's own tools (a search for its name, a
click, an option at a time, add to cart; their pages are observations too). The
verifier checks the cart against the hand-off (on some tasks first the item against the
catalogue with a program of its own) and checks out with TERMINATE.

Every step takes the target from the most recent step that stated it (`expert_forms.
believed`), never from the instruction again, and the verifier checks the cart against
that statement, not against the instruction: a wrong option stated and bought gets
through, as in many recorded chats. An option the shop refuses, an item the search does
not show or a failed check sends the lookup round again without that item.
"""

from __future__ import annotations

from collections.abc import Sequence

from whowhen.agents import phrasing
from whowhen.agents.phrasing import Form
from whowhen.agents.scripted import ScriptedExpertChat
from whowhen.benchmarks.web_shop.expert_code import (
    PEEK_CODE,
    Line,
    check_code,
    check_result,
    has_budget,
    lookup_code,
    printed,
    program_kind,
)
from whowhen.benchmarks.web_shop.expert_forms import (
    ADD_ITEM,
    APPROVE,
    BACK_TO_SHOP,
    CART_READY,
    CART_WRONG,
    CHECK,
    CHECK_FAILED,
    CHECKER,
    CODER,
    END,
    FIX,
    LOOKUP,
    NO_BUDGET,
    NONE_FOUND,
    NOT_LISTED,
    OPEN_ITEM,
    PEEK,
    PICK,
    REDO,
    REDO_SKIP,
    REFUSED,
    REMOVE_LINE,
    SEARCH_ITEM,
    SELECT_OPTION,
    SHOPPER,
    TO_CART,
    Target,
    addressed,
    believed,
    skipped,
)
from whowhen.benchmarks.web_shop.pages import (
    Item,
    cart,
    current_page,
    listed_ids,
    product,
)
from whowhen.benchmarks.web_shop.policies import line_text
from whowhen.runtime import Action, Step
from whowhen.tools import TERMINAL, code_of, failed, last_agent, output_after, program, programs

PEEK_P = 0.2
"""How often the Python_Expert looks at the file's layout before the lookup."""
NESTED_MISS = 0.25
"""How often (without that look) its first lookup reads the options at the top level."""
BROAD = 0.25
"""How often its first lookup forgets the budget (sent back: a recovery)."""
CAREFUL = 0.3
"""How often the verifier checks the item in the cart against the catalogue."""
CartLines = list[tuple[Item, dict[str, str]]]


def right_cart(lines: CartLines, t: Target) -> bool:
    """The cart is one line of the handed-over item with exactly the wanted options."""
    return len(lines) == 1 and lines[0][0].item_id == t.item and lines[0][1] == dict(t.want)


def first_under(lines: Sequence[Line]) -> Line | None:
    return next((line for line in lines if line.verdict == "under"), None)


def handed(t: Target, line: Line) -> dict[str, object]:
    """The fields of a hand-off of `line` (the target's options)."""
    return {**t.fields(), "item": line.item, "product": line.product, "price": line.price}


class ExpertChatSystem(ScriptedExpertChat):
    agents = (CODER, SHOPPER, CHECKER)
    end = END

    def speaker(self, history: Sequence[Step]) -> str:
        last = last_agent(history)
        if last is None:
            return CODER
        if last.tool == TERMINAL:  # a lookup's output goes to the verifier
            out = output_after(history, last)
            kind = program_kind(code_of(last))
            if last.actor == CODER and not failed(out) and kind == "lookup":
                return CHECKER
            return last.actor
        if last.tool is None:
            return addressed(last) or CHECKER
        if last.tool == "add_to_cart" and output_after(history, last).startswith("Added"):
            return CHECKER
        return last.actor

    def speak(self, who: str, history: Sequence[Step]) -> Action:
        if who == CODER:
            return self._look_up(history)
        if who == SHOPPER:
            return self._shop(history)
        return self._verify(history)

    # --- the Python_Expert ----------------------------------------------------------------
    def _look_up(self, history: Sequence[Step]) -> Action:
        t = believed(history)
        mine = programs(history, CODER)
        last = mine[-1] if mine else None
        if last is None and phrasing.task_chance(history, "shop.expert.peek", PEEK_P):
            return program(CODER, PEEK.say(history), PEEK_CODE)
        if last is None or program_kind(code_of(last)) == "peek":
            broad = phrasing.task_chance(history, "shop.expert.broad", BROAD)
            miss = last is None and phrasing.task_chance(history, "shop.expert.nested", NESTED_MISS)
            code = lookup_code(t, budget=not broad, nested=not miss)
            return program(CODER, LOOKUP.say(history, **t.fields()), code)
        skip = skipped(history)
        if failed(output_after(history, last)) and last_agent(history) is last:
            code = lookup_code(t, budget=has_budget(code_of(last)), skip=skip)
            return program(CODER, FIX.say(history, **t.fields()), code)
        if skip:
            text = REDO_SKIP.say(history, **t.fields(), items=", ".join(skip))
            return program(CODER, text, lookup_code(t, skip=skip))
        return program(CODER, REDO.say(history, **t.fields()), lookup_code(t))

    # --- the Verification_Expert ----------------------------------------------------------
    def _verify(self, history: Sequence[Step]) -> Action:
        t = believed(history)
        last = last_agent(history)
        if last is not None and last.actor == CODER:
            if last.tool == TERMINAL:
                return self._review(history, last, t)
            return self._close(history, t)  # told that nothing was found
        return self._check_cart(history, t)

    def _close(self, history: Sequence[Step], t: Target) -> Action:
        return Action(CHECKER, NONE_FOUND.say(history, **t.fields()), "checkout", {})

    def _review(self, history: Sequence[Step], lookup: Step, t: Target) -> Action:
        """The lookup's program and output: no budget test is sent back; else the first
        line under the budget is handed over (none: nothing to buy)."""
        if not has_budget(code_of(lookup)):
            return Action(CHECKER, NO_BUDGET.say(history, **t.fields()))
        line = first_under(printed(output_after(history, lookup)))
        if line is None:
            return self._close(history, t)
        return Action(CHECKER, PICK.say(history, **handed(t, line)))

    def _check_cart(self, history: Sequence[Step], t: Target) -> Action:
        lines = cart(history)
        if not right_cart(lines, t):
            holds = "; ".join(line_text(line) for line in lines) or "nothing"
            return Action(CHECKER, CART_WRONG.say(history, **t.fields(), holds=holds))
        adds = [s for s in history if s.actor == SHOPPER and s.tool == "add_to_cart"]
        since = adds[-1].step if adds else 0
        checks = programs(history, CHECKER, since)
        careful = phrasing.task_chance(history, "shop.expert.careful", CAREFUL)
        if careful and not checks:
            return program(CHECKER, CHECK.say(history, **t.fields()), check_code(t))
        if checks:
            out = output_after(history, checks[-1])
            wrong = [what for what, ok in check_result(out) if not ok]
            if failed(out) or not check_result(out) or wrong:
                why = f"{' and '.join(wrong)} is False" if wrong else "it is not in the catalogue"
                return Action(CHECKER, CHECK_FAILED.say(history, **t.fields(), why=why))
        text = APPROVE.say(history, **t.fields(), line=line_text(lines[0]))
        return Action(CHECKER, text, "checkout", {})

    # --- the WebNavigation_Expert ---------------------------------------------------------
    def _shop(self, history: Sequence[Step]) -> Action:
        """The next shop action towards a cart of one line, the handed-over item with the
        wanted options: clear wrong lines, find and open the item, select, add."""
        t = believed(history)
        f = t.fields()
        last = history[-1]
        if last.actor == "select_option" and last.content.startswith("Error:"):
            args = history[-2].tool_args or {}
            why = last.content.removeprefix("Error: ")
            fields = {**f, "name": args.get("name", ""), "value": args.get("value", ""), "why": why}
            return Action(SHOPPER, REFUSED.say(history, **fields))
        lines, page = cart(history), current_page(history)
        if right_cart(lines, t):  # a cart the verifier sent back, now set right
            return Action(SHOPPER, CART_READY.say(history, line=line_text(lines[0])))
        if lines:
            if page is None or page.kind != "cart":
                return _click(history, TO_CART, "cart", f)
            wrong = next((ln for ln in lines if not right_cart([ln], t)), lines[-1])
            line, item = line_text(wrong), wrong[0].item_id
            return _click(history, REMOVE_LINE, f"remove {item}", {**f, "line": line})
        if page is not None and page.kind == "cart":
            return _click(history, BACK_TO_SHOP, "back", f)
        if page is not None and page.kind == "product":
            shown = product(page.text)
            if shown is not None and shown.item_id == t.item:
                return self._configure(history, t, page.index)
        if page is not None and page.kind == "results" and t.item in listed_ids(history):
            return _click(history, OPEN_ITEM, t.item, f)
        mine = last_agent(history, SHOPPER)
        if mine is not None and mine.tool == "search" and mine.step == len(history) - 2:
            return Action(SHOPPER, NOT_LISTED.say(history, **f))
        query = {"query": t.product}
        return Action(SHOPPER, SEARCH_ITEM.say(history, **f), "search", query)

    def _configure(self, history: Sequence[Step], t: Target, since: int) -> Action:
        """Select each wanted option the page at `since` does not have selected, then add."""
        chosen = selection(history, since)
        for name, value in t.want:
            if chosen.get(name) != value:
                text = SELECT_OPTION.say(history, item=t.item, name=name, value=value)
                return Action(SHOPPER, text, "select_option", {"name": name, "value": value})
        return Action(SHOPPER, ADD_ITEM.say(history, **t.fields()), "add_to_cart", {})


def _click(history: Sequence[Step], form: Form, target: str, fields: dict[str, object]) -> Action:
    return Action(SHOPPER, form.say(history, **fields), "click", {"target": target})


def selection(history: Sequence[Step], since: int) -> dict[str, str]:
    """The options selected on the product page shown at `since`: its `Selected:` line,
    then each selection the shop confirmed."""
    page = history[since].content
    line = next((x for x in page.splitlines() if x.startswith("Selected: ")), "")
    chosen = _pairs(line.removeprefix("Selected: "))
    for step in history[since + 1 :]:
        if step.actor == "select_option" and step.content.startswith("Selected "):
            current = step.content.split("Current selection: ", 1)[-1]
            chosen = _pairs(current.split("; still", 1)[0].rstrip("."))
    return chosen


def _pairs(text: str) -> dict[str, str]:
    """`colour=red, size=M` as a dict."""
    return dict(kv.split("=", 1) for kv in text.split(", ") if "=" in kv)
