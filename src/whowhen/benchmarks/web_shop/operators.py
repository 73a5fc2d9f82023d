"""Error operators for the web shop steps and messages, one per taxonomy mode.

Every replacement is coherent: it is built with the policies' own `Form`s and
builders (`open_first_fit`, `swaps.swap_target`), in the wording the original step used
(or, for a step of another kind, the wording the policy's draw gives at that index), from
a wrong belief, so the option, item, target or tool its text names is the one it uses,
and the step is wrong only given the history and the task (another colour or size taken
for the one asked for, a misread budget or price, the belief that an item lacks an
option or is already in the cart). Every kind of step the policies emit has one, and each
is decisive: the agents act on the latest stated target (`belief`), and an item said to
lack an option is not tried again, so the continued run fails.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.base import covers
from whowhen.benchmarks.web_shop import messages as M
from whowhen.benchmarks.web_shop.actions import (
    ADD,
    BACK,
    CHECKOUT,
    CLICK,
    COLOUR_SEARCH,
    OPTION_RE,
    REMOVE_WRONG,
    RETRY,
    SEARCH,
    SELECT,
    listed_items,
    open_first_fit,
)
from whowhen.benchmarks.web_shop.belief import spec_of
from whowhen.benchmarks.web_shop.pages import (
    Item,
    cart,
    current_page,
    opened_since_search,
    product,
)
from whowhen.benchmarks.web_shop.policies import line_text
from whowhen.benchmarks.web_shop.swaps import HANDOFFS, REPORTS, other_target, swap_target
from whowhen.benchmarks.web_shop.tasks import NOUNS
from whowhen.runtime import Action, Step
from whowhen.slips import typo


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
    that fits the budget it states, as the policy would with that budget (only a look-alike
    over the real budget can come first, and it offers the options: it is bought)."""
    if action.tool == "select_option" and (f := SELECT.fields(action.content)):
        other = _neighbour([v.strip() for v in f["values"].split(",")], f["value"], rng)
        if other is None:
            return None
        text = _redo(SELECT, action, value=other)
        return Action(action.actor, text, "select_option", {"name": f["name"], "value": other})
    click = _click(action, history)
    if click is None:
        return None
    items, (noun, desc, cap), opened, wording = click
    for _ in range(4):
        believed = int(typo(str(cap), rng))
        target = (noun, desc, believed)
        made = open_first_fit(history, action.actor, items, target, opened, wording)
        if believed > cap and made is not None and made.tool_args != action.tool_args:
            return made
    return None


def _click(
    action: Action, history: Sequence[Step]
) -> tuple[list[Item], tuple[str, str, int], set[str], int] | None:
    """(the items the click message lists, (product word, description, budget), items
    opened already, wording) of a policy's click on a results item; None otherwise."""
    found = CLICK.read(action.content) if action.tool == "click" else None
    if found is None:
        return None
    i, f = found
    target = (f["noun"], f["desc"], int(f["cap"]))
    return listed_items(f["listing"]), target, opened_since_search(history), i


@covers("react")
def premature_finish(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """Check out while an option is still unset (the item not yet in the cart), argued
    for in the policy's words ("The red lamp is in the cart; I will check out.")."""
    if action.tool != "select_option" or SELECT.fields(action.content) is None or not history:
        return None
    desc = spec_of(history).desc
    return Action(action.actor, _say(CHECKOUT, history, action, desc=desc), "checkout", {})


@covers("react", "orchestrator")
def wrong_tool(action: Action, rng: random.Random, history: Sequence[Step] = ()) -> Action | None:
    """Another tool on a wrong belief about the item or the cart: instead of adding the
    item, going back (the agent) or reporting it cannot be added (the buyer), believing it
    lacks an option (it is then left out of the search); instead of checking out, adding it
    again (believing it is not in the cart yet: a doubled cart), removing the cart's line
    (believing it is another colour or size than the one wanted), or the verifier sending
    the cart back for the same reason."""
    if not history or action.tool not in ("add_to_cart", "checkout"):
        return None
    spec = spec_of(history)
    page = current_page(history)
    if action.tool == "add_to_cart" and ADD.read(action.content):
        item = product(page.text) if page is not None and page.kind == "product" else None
        if item is None:
            return None
        t = spec.target()
        if action.actor == "buyer":
            why = f"it does not offer {spec.options}"
            text = _say(M.BUYER_FAIL, history, action, item=item.item_id, why=why, **t)
            return Action(action.actor, text)
        fields = {"product": item.name, "missing": spec.options, **t}
        return Action(
            action.actor, _say(BACK, history, action, **fields), "click", {"target": "back"}
        )
    lines = cart(history)
    if len(lines) != 1:
        return None
    wanted = other_target((spec.colour, spec.size), rng, line_text(lines[0]))
    if wanted is None:
        return None
    desc = spec.desc.replace(spec.colour, wanted[0], 1)
    if wanted[1] != spec.size:
        desc = desc.replace(f"size {spec.size}", f"size {wanted[1]}")
    if action.actor == "verifier" and M.APPROVE.read(action.content):
        opts = ", ".join(f"{k}={v}" for k, v in lines[0][1].items())
        holds = f"{lines[0][0].name} ({opts})"
        fields = {"holds": holds, "desc": desc, "cap": spec.cap}
        return Action(action.actor, _say(M.REJECT, history, action, **fields))
    if not CHECKOUT.read(action.content) or page is None:
        return None
    if page.kind == "cart":
        item_id = lines[0][0].item_id
        fields = {"line": line_text(lines[0]), "item": item_id, "desc": desc}
        text = _say(REMOVE_WRONG, history, action, **fields)
        return Action(action.actor, text, "click", {"target": f"remove {item_id}"})
    text = _say(ADD, history, action, desc=spec.desc)
    return Action(action.actor, text, "add_to_cart", {})


@covers("react", "orchestrator")
def misidentified_object(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """Another colour or size taken for the one asked for, stated where the step states
    the target (a click, a request, a report, a check) and acted on from then on; or, for
    the agent opening a listed item, a look-alike over the budget for an item that fits:
    it mixes up the two rows' prices, lists them so, and opens the look-alike as the first
    item that fits (as the policy would, had the page shown those prices)."""
    if action.actor == "assistant" and (mixed := _price_mixup(action, rng, history)):
        return mixed
    if action.tool not in (None, "click"):
        return None
    return swap_target(action, rng, history)


def _price_mixup(action: Action, rng: random.Random, history: Sequence[Step]) -> Action | None:
    click = _click(action, history)
    if click is None:
        return None
    items, (noun, desc, cap), opened, wording = click
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
        target = (noun, desc, cap)
        made = open_first_fit(history, action.actor, believed, target, seen, wording)
        if made is not None and (made.tool_args or {}).get("target") == other.item_id:
            return made
    return None


@covers("orchestrator")
def misread_value(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """A report of what a page showed with an option misread (the searcher's find, the
    verifier's check of the open item, the buyer's cart line): the team goes on with it."""
    if action.tool is not None:
        return None
    return swap_target(action, rng, history, REPORTS)


def false_approval(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """The verifier checks out the cart it was about to send back, or passes the open item
    it was about to reject (its price and the options it was asked about, as it would)."""
    if action.tool is not None or action.actor != "verifier":
        return None
    found = M.REJECT.read(action.content)
    if found is not None:
        i, f = found
        return Action(action.actor, M.APPROVE.at(i, desc=f["desc"], cap=f["cap"]), "checkout", {})
    f = M.ITEM_BAD.fields(action.content)
    page = current_page(history)
    item = product(page.text) if f and page is not None and page.kind == "product" else None
    if f is None or item is None or item.item_id != f["item"] or not history:
        return None
    spec = spec_of(history)
    fields = {"item": item.item_id, "price": item.price, "cap": spec.cap, "options": spec.options}
    return Action(action.actor, _say(M.ITEM_OK, history, action, **fields))


@covers("react", "orchestrator")
def wrong_subgoal(
    action: Action, rng: random.Random, history: Sequence[Step] = ()
) -> Action | None:
    """A search for the product's accessory (the lamp shade for a lamp): the results hold
    no item with the product word, so the agent finds nothing to buy; or a first, narrow
    search for another colour than the one asked for, which the agent then pursues."""
    if action.tool != "search":
        return None
    if COLOUR_SEARCH.read(action.content):
        return swap_target(action, rng, history, (COLOUR_SEARCH,))
    query = str((action.tool_args or {}).get("query", ""))
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
    """A message that passes the target on with another colour or size than the one it
    was given (a request, a find, a hand-off to the buyer with its options, a check or
    the cart line reported), in the same wording; the receiver acts on it."""
    if action.tool is not None:
        return None
    if (f := M.BUY.fields(action.content)) is not None:
        return _buy_options(action, f, rng, history)
    return swap_target(action, rng, history, HANDOFFS)


def _buy_options(
    action: Action, f: dict[str, str], rng: random.Random, history: Sequence[Step]
) -> Action | None:
    """The hand-off to the buyer with a neighbouring option value the open item lists
    (else another colour): the buyer selects it, and the cart holds the wrong option."""
    want = OPTION_RE.findall(f["options"])
    page = current_page(history)
    item = product(page.text) if page is not None and page.kind == "product" else None
    options = dict(item.options) if item is not None and item.item_id == f["item"] else {}
    swaps = [
        (i, v)
        for i, (k, value) in enumerate(want)
        if (v := _neighbour(options.get(k, ()), value, rng))
    ]
    if not swaps:
        return swap_target(action, rng, history, (M.BUY,))
    i, value = rng.choice(swaps)
    want[i] = (want[i][0], value)
    text = _redo(M.BUY, action, options=" and ".join(f"{k} {v}" for k, v in want))
    return Action(action.actor, text) if text else None


OPERATORS = {
    "planning.wrong_subgoal": wrong_subgoal,
    "coordination.distorted_handoff": distorted_handoff,
    "action.wrong_tool_argument": wrong_tool_argument,
    "planning.premature_finish": premature_finish,
    "action.wrong_tool": wrong_tool,
    "perception.misidentified_object": misidentified_object,
    "perception.misread_value": misread_value,
    "verification.false_approval": false_approval,
}
"""Taxonomy mode -> operator for this benchmark's search, click, select_option, add_to_cart,
checkout and the agents' messages."""
