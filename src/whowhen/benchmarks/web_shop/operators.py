"""Error operators for the web shop steps and messages, one per taxonomy mode.

Every replacement is coherent (issue 19): it is built with the policies' own `Form`s and
builders (`open_first_fit`), in the wording the original step used (or, for a step of
another kind, the wording the policy's draw gives at that index), from a wrong belief, so
the option, item or tool its text names is the one it uses, and the step is wrong only
given the history and the task (a misread budget or price, another option value, the
belief that the item is already in the cart).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.web_shop.actions import (
    ADD,
    APPROVE,
    BUY,
    CHECKOUT,
    CLICK,
    DESC_RE,
    FOUND,
    OPTION_RE,
    REJECT,
    RETRY,
    SEARCH,
    SEARCH_REQUEST,
    SELECT,
    describe,
    listed_items,
    open_first_fit,
    options_text,
)
from whowhen.benchmarks.web_shop.pages import (
    Item,
    current_page,
    listed,
    opened_since_search,
    product,
)
from whowhen.benchmarks.web_shop.tasks import COLOURS, NOUNS, SIZES
from whowhen.injection.slips import typo
from whowhen.runtime import Action, Step


def _say(form: Form, history: Sequence[Step], like: Action, **fields: object) -> str:
    """`form` in the wording the policy's draw gives at this step (the original's wording
    index when there is no history)."""
    if history:
        return form.say(history, **fields)
    return form.at(len(like.content) % len(form.variants), **fields)


def _redo(form: Form, action: Action, **changes: object) -> str | None:
    """`action`'s text (a step in `form`) re-said in the same wording with `changes`."""
    found = form.read(action.content)
    if found is None:
        return None
    i, fields = found
    return form.at(i, **{**fields, **changes})


@covers("react", "orchestrator")
def wrong_tool_argument(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """A neighbouring option value, said and selected ("... I will select colour grey."
    for black); or a mistyped budget (35 read as 53): the agent opens the first listed item
    that fits the budget it states, as the policy would with that budget."""
    if action.tool == "select_option" and (f := SELECT.fields(action.content)):
        other = _neighbour([v.strip() for v in f["values"].split(",")], f["value"], rng)
        if other is None:
            return None
        text = _redo(SELECT, action, value=other)
        return Action(action.actor, text, "select_option", {"name": f["name"], "value": other})
    click = _click(action, history)
    if click is None:
        return None
    noun, items, cap, opened, wording = click
    for _ in range(4):
        believed = int(typo(str(cap), rng))
        made = open_first_fit(history, action.actor, items, noun, believed, opened, wording)
        if believed > cap and made is not None and made.tool_args != action.tool_args:
            return made
    return None


def _click(
    action: Action, history: Sequence[Step]
) -> tuple[str, list[Item], int, set[str], int] | None:
    """(product word, the items the click message lists, budget, items opened already,
    wording) of a policy's click on a results item; None for any other step."""
    found = CLICK.read(action.content) if action.tool == "click" else None
    if found is None:
        return None
    i, f = found
    return f["noun"], listed_items(f["listing"]), int(f["cap"]), opened_since_search(history), i


@covers("react")
def premature_finish(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """Add to cart, or check out, while an option is still unset, argued for in the
    policy's words ("All options for the lamp are set; I will add it to the cart.")."""
    f = SELECT.fields(action.content) if action.tool == "select_option" else None
    if f is None:
        return None
    noun = f["noun"]
    if rng.random() < 0.5:
        return Action(action.actor, _say(ADD, history, action, noun=noun), "add_to_cart", {})
    return Action(action.actor, _say(CHECKOUT, history, action, noun=noun), "checkout", {})


@covers("react", "orchestrator")
def wrong_tool(action: Action, rng: random.Random, history: Sequence[Step] = ()) -> Action | None:
    """Check out believing the item is already in the cart (instead of adding it: an
    empty cart), or add it again believing it is not yet there (instead of checking out:
    a doubled cart), in the policy's words for that belief."""
    if action.tool == "add_to_cart" and (f := ADD.fields(action.content)):
        text = _say(CHECKOUT, history, action, noun=f["noun"])
        return Action(action.actor, text, "checkout", {})
    if action.tool == "checkout":
        f = CHECKOUT.fields(action.content)
        noun = f["noun"] if f else None
        if noun is None and (a := APPROVE.fields(action.content)):
            m = DESC_RE.match(a["desc"])
            noun = m.group(2) if m else None
        if noun is not None:
            return Action(action.actor, _say(ADD, history, action, noun=noun), "add_to_cart", {})
    return None


@covers("react", "orchestrator")
def misidentified_object(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """Take a listed look-alike over the budget for an item that fits: the agent mixes up
    the two rows' prices, lists them so, and opens the look-alike as the first item that
    fits (as the policy would, had the page shown those prices)."""
    click = _click(action, history)
    if click is None:
        return None
    noun, items, cap, opened, wording = click
    chosen = str((action.tool_args or {}).get("target", ""))
    fits = [it.item_id for it in items if it.word == noun and it.cents < cap * 100]
    fits = [i for i in fits if i not in opened]
    if chosen not in fits:
        return None
    at = {it.item_id: i for i, it in enumerate(items)}
    over = [it for it in items if it.word == noun and it.cents >= cap * 100]
    rng.shuffle(over)
    # look-alikes with the fewest fitting items listed before them first: the mix-up of
    # one pair of rows is then enough to make the look-alike the first fit
    over.sort(key=lambda it: sum(at[i] < at[it.item_id] for i in fits))
    for other in over:
        before = [i for i in fits if at[i] < at[other.item_id]]
        partner = before[0] if len(before) == 1 else chosen
        i, j = at[partner], at[other.item_id]
        believed = list(items)
        believed[i] = Item(items[i].item_id, items[i].name, items[j].cents)
        believed[j] = Item(items[j].item_id, items[j].name, items[i].cents)
        # fits listed before it besides the partner: taken as looked at already
        seen = opened | (set(before) - {partner})
        made = open_first_fit(history, action.actor, believed, noun, cap, seen, wording)
        if made is not None and (made.tool_args or {}).get("target") == other.item_id:
            return made
    return None


@covers("orchestrator")
def false_approval(action: Action, rng: random.Random) -> Action | None:
    """The verifier checks out the cart it was about to send back."""
    found = REJECT.read(action.content) if action.tool is None else None
    if found is None or action.actor != "verifier":
        return None
    i, f = found
    return Action(action.actor, APPROVE.at(i, desc=f["desc"]), "checkout", {})


@covers("react")
def wrong_subgoal(action: Action, rng: random.Random) -> Action | None:
    """A search for the product's accessory (the lamp shade for a lamp): the results hold
    no item with the product word, so the agent finds nothing to buy."""
    query = str((action.tool_args or {}).get("query", "")) if action.tool == "search" else ""
    form = next((f for f in (SEARCH, RETRY) if f.read(action.content)), None)
    if query not in NOUNS or form is None or form.fields(action.content)["noun"] != query:
        return None
    other = f"{query} {NOUNS[query][2]}"
    return Action(action.actor, _redo(form, action, noun=other), "search", {"query": other})


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
    """A message passing on a neighbouring listed item, named by its own id, name and price
    as the results list it (the searcher's report, the hand-off to the buyer), a
    neighbouring option value (the hand-off to the buyer) or another budget or option value
    than the instruction's (the request to the searcher), in the same wording."""
    if action.tool is not None:
        return None
    items = {it.item_id: it for it in listed(history)}
    if action.actor == "searcher" and (f := FOUND.fields(action.content)):
        other = _neighbour(list(items), f["item"], rng)
        if other is None:
            return None
        found = items[other]
        text = _redo(FOUND, action, item=other, name=found.name, price=found.price)
        return Action(action.actor, text) if text else None
    if action.actor == "orchestrator" and (f := BUY.fields(action.content)):
        item_id, name, want = f["item"], f["name"], OPTION_RE.findall(f["options"])
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
        elif (other := _neighbour(list(items), item_id, rng)) is not None:
            item_id, name = other, items[other].name
        else:
            return None
        text = _redo(BUY, action, item=item_id, name=name, options=options_text(want))
        return Action(action.actor, text) if text else None
    f = SEARCH_REQUEST.fields(action.content) if action.actor == "orchestrator" else None
    m = DESC_RE.match(f["desc"]) if f else None
    if f is None or m is None:
        return None
    colour, noun, size = m.groups()
    cap = int(f["cap"])
    pick = rng.random()
    if pick < 0.75:
        cap += rng.choice((5, 10, 15))
    elif pick < 0.9 or size is None:
        colour = _neighbour(COLOURS, colour, rng) or colour
    else:
        size = _neighbour(SIZES, size, rng) or size
    article = "an" if colour[0] in "aeiou" else "a"
    text = _redo(
        SEARCH_REQUEST, action, article=article, desc=describe(colour, noun, size), cap=cap
    )
    return Action(action.actor, text) if text else None


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
