"""Error operators for the web shop steps and messages, one per taxonomy mode."""

from __future__ import annotations

import random
from collections.abc import Sequence

from whowhen.agents.scripted import tell
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.web_shop.actions import (
    ADD,
    APPROVE,
    BUY_RE,
    CHECKOUT,
    CLICK,
    CLICK_RE,
    FOUND_RE,
    LISTED,
    OPTION_RE,
    REJECT_RE,
    SEARCH_RE,
    SELECT_RE,
    buy_request,
    search_request,
    search_text,
)
from whowhen.benchmarks.web_shop.pages import current_page, listed_ids, product
from whowhen.benchmarks.web_shop.tasks import COLOURS, NOUNS, SIZES
from whowhen.runtime import Action, Step

# operators ---------------------------------------------------------------------------


@covers("react", "orchestrator")
def wrong_tool_argument(action: Action, rng: random.Random) -> Action | None:
    """A neighbouring option value from the listed ones, or a neighbouring listed item."""
    if action.tool == "select_option" and (m := SELECT_RE.match(action.content)):
        values = [v.strip() for v in m.group(3).split(",")]
        if m.group(4) not in values:
            return None
        i = values.index(m.group(4))
        near = [values[j] for j in (i - 1, i + 1) if 0 <= j < len(values)]
        args = {"name": m.group(2), "value": rng.choice(near)} if near else None
        return Action(action.actor, action.content, "select_option", args) if args else None
    if action.tool == "click" and (m := CLICK_RE.match(action.content)):
        ids = [i for _, i, _, _ in LISTED.findall(m.group(2))]
        if m.group(4) not in ids:
            return None
        i = ids.index(m.group(4))
        near = [ids[j] for j in (i - 1, i + 1) if 0 <= j < len(ids)]
        return Action(action.actor, action.content, "click", {"target": rng.choice(near)})
    return None


@covers("react")
def premature_finish(action: Action, rng: random.Random) -> Action | None:
    """Add to cart, or check out, while an option is still unset."""
    m = SELECT_RE.match(action.content) if action.tool == "select_option" else None
    if m is None:
        return None
    noun = m.group(1)
    if rng.random() < 0.5:
        return Action(action.actor, ADD.format(noun=noun), "add_to_cart", {})
    return Action(action.actor, CHECKOUT.format(noun=noun), "checkout", {})


@covers("react", "orchestrator")
def wrong_tool(action: Action, rng: random.Random) -> Action | None:
    """Check out instead of adding to the cart (empty cart), or add again instead of
    checking out (a doubled cart)."""
    swap = {"add_to_cart": "checkout", "checkout": "add_to_cart"}.get(action.tool or "")
    return Action(action.actor, action.content, swap, {}) if swap else None


@covers("react", "orchestrator")
def misidentified_object(action: Action, rng: random.Random) -> Action | None:
    """Take a listed item with the same product word but over the budget for the one that
    fits, and open it."""
    m = CLICK_RE.match(action.content) if action.tool == "click" else None
    if m is None:
        return None
    cap = int(m.group(5))
    over = [
        (name, i, f"${d}.{c}")
        for name, i, d, c in LISTED.findall(m.group(2))
        if int(d) * 100 + int(c) >= cap * 100 and i != m.group(4)
    ]
    if not over:
        return None
    name, item_id, price = rng.choice(over)
    choice = f"{name} ({item_id}, {price})"
    text = CLICK.format(noun=m.group(1), listing=m.group(2), choice=choice, cap=cap)
    return Action(action.actor, text, "click", {"target": item_id})


@covers("orchestrator")
def false_approval(action: Action, rng: random.Random) -> Action | None:
    """The verifier checks out the cart it was about to send back."""
    m = REJECT_RE.match(action.content) if action.tool is None else None
    if m is None or action.actor != "verifier":
        return None
    return Action(action.actor, APPROVE.format(desc=m.group(1)), "checkout", {})


@covers("react")
def wrong_subgoal(action: Action, rng: random.Random) -> Action | None:
    """A search for the product's accessory (the lamp shade for a lamp): the results hold
    no item with the product word, so the agent finds nothing to buy."""
    query = str((action.tool_args or {}).get("query", "")) if action.tool == "search" else ""
    if query not in NOUNS or action.content != search_text(query):
        return None
    other = f"{query} {NOUNS[query][2]}"
    return Action(action.actor, search_text(other), "search", {"query": other})


def _neighbour(values: Sequence[str], value: str, rng: random.Random) -> str | None:
    """A value next to `value` in a listed order (None if it is not listed or alone)."""
    if value not in values:
        return None
    i = list(values).index(value)
    near = [values[j] for j in (i - 1, i + 1) if 0 <= j < len(values)]
    return rng.choice(near) if near else None


@covers("orchestrator")
def distorted_handoff(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """A message passing on a neighbouring item id (the searcher's report, the hand-off to
    the buyer), a neighbouring option value (the hand-off to the buyer) or another budget
    or option value than the instruction's (the request to the searcher)."""
    if action.tool is not None:
        return None
    text = action.content
    if text.startswith("To orchestrator: found item") and (m := FOUND_RE.search(text)):
        other = _neighbour(listed_ids(history), m.group(1), rng)
        return Action(action.actor, text.replace(m.group(1), other, 1)) if other else None
    if text.startswith("To buyer: item") and (m := BUY_RE.search(text)):
        item_id, name, want = m.group(1), m.group(2), OPTION_RE.findall(m.group(3))
        page = current_page(history)
        item = product(page.text) if page is not None and page.kind == "product" else None
        options = dict(item.options) if item is not None and item.item_id == item_id else {}
        swaps = [
            (i, v)
            for i, (k, value) in enumerate(want)
            if (v := _neighbour(options.get(k, ()), value, rng))
        ]
        if swaps and rng.random() < 0.5:
            i, value = rng.choice(swaps)
            want[i] = (want[i][0], value)
        elif (other := _neighbour(listed_ids(history), item_id, rng)) is not None:
            item_id = other
        else:
            return None
        return tell(action.actor, "buyer", buy_request(item_id, name, want))
    m = SEARCH_RE.search(text) if text.startswith("To searcher: find") else None
    if m is None:
        return None
    colour, noun, size, cap = m.group(1), m.group(2), m.group(3), int(m.group(4))
    pick = rng.random()
    if pick < 0.75:
        cap += rng.choice((5, 10, 15))
    elif pick < 0.9 or size is None:
        colour = _neighbour(COLOURS, colour, rng) or colour
    else:
        size = _neighbour(SIZES, size, rng) or size
    return tell(action.actor, "searcher", search_request(colour, noun, size, cap))


OPERATORS = {
    "planning.wrong_subgoal": wrong_subgoal,
    "coordination.distorted_handoff": distorted_handoff,
    "action.wrong_tool_argument": wrong_tool_argument,
    "planning.premature_finish": premature_finish,
    "action.wrong_tool": wrong_tool,
    "perception.misidentified_object": misidentified_object,
    "verification.false_approval": false_approval,
}
"""Taxonomy mode -> operator for this benchmark's search, click, select_option, add_to_cart,
checkout and the agents' messages."""
