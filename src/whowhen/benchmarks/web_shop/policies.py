"""Scripted reference policies for the web shop, deciding only from the visible history.

What to buy is the agents' working belief (`belief.spec_of`): the target as the latest
agent step stated it, not re-read from the instruction, so a wrong target stated at any
step is carried on to the purchase (every kind of step can be a decisive one).

ReAct: state a plan naming the target, search the product word (sometimes a narrower
search with the colour first, which finds nothing, since names carry no colours), open the
first result with that word whose price fits, go back if it lacks the wanted colour or
size, page on when a page has no untried fit, note the item that offers the options,
select each option, add to cart, (a careful agent looks at the cart once and removes a
line that is not what it is after) and check out. Orchestrator: a searcher finds
and opens the item; the orchestrator sometimes has the verifier check the open item
against the target first (price and options off the page on screen: a wrong item is
sent back and searched again without it); a buyer configures it and adds it to the cart
(an item it cannot configure is reported and searched again without it), and the
verifier checks the cart against the target it was handed before checking out (one line
of that product with those options: a doubled or wrong cart is sent back, emptied and
bought again; it does not re-check the price there, trusting the earlier steps). When
nothing fits, the verifier checks out the cart as it is. Wordings and detours are drawn
with `whowhen.agents.phrasing` from the task text and the step index.
"""

from __future__ import annotations

from collections.abc import Sequence

from whowhen.agents.phrasing import Form, chance, task_chance
from whowhen.agents.scripted import ScriptedOrchestrator, ScriptedReact, addressee
from whowhen.benchmarks.web_shop import messages as M
from whowhen.benchmarks.web_shop.actions import (
    ADD,
    BACK,
    BACK_CART,
    CHECKOUT,
    COLOUR_SEARCH,
    NEXT_PAGE,
    NONE_FITS,
    NOTE,
    PLAN,
    REMOVE_WRONG,
    RETRY,
    SCAN,
    SCAN_BACK,
    SEARCH,
    SELECT,
    VIEW_CART,
    open_first_fit,
)
from whowhen.benchmarks.web_shop.belief import Spec, spec_of
from whowhen.benchmarks.web_shop.pages import (
    Item,
    added,
    cart,
    current_page,
    last_message_to,
    listed_ids,
    opened_since_search,
    product,
    results,
    selected_names,
)
from whowhen.runtime import Action, Step

COLOUR_SEARCH_P, CHECK_ITEM_P, VIEW_CART_P, SCAN_P = 0.6, 0.5, 0.8, 0.7
CartLines = list[tuple[Item, dict[str, str]]]


def _say(history: Sequence[Step], sender: str, form: Form, **fields: object) -> Action:
    return Action(sender, form.say(history, **fields))


def _click(actor: str, history: Sequence[Step], form: Form, target: str, **f: object) -> Action:
    return Action(actor, form.say(history, **f), "click", {"target": target})


def line_text(line: tuple[Item, dict[str, str]]) -> str:
    """A cart line as the cart page shows it."""
    item, opts = line
    chosen = ", ".join(f"{k}={v}" for k, v in opts.items())
    return f"{item.item_id} {item.name} ({chosen}) | {item.price}"


def cart_matches(lines: CartLines, spec: Spec) -> bool:
    """The cart is one line of the product word with exactly the wanted options."""
    return len(lines) == 1 and lines[0][1] == dict(spec.want) and lines[0][0].word == spec.noun


def find_item(
    actor: str, history: Sequence[Step], since: int, spec: Spec, skip: frozenset[str] = frozenset()
) -> Action | Item | None:
    """The next browsing action, the open product once it offers what is wanted, or None
    when no result is left to try (`skip`: items the agent was told to leave out)."""
    searched = [s for s in history[since:] if s.actor == actor and s.tool == "search"]
    page = current_page(history, since)
    t, noun = spec.target(), spec.noun
    if not searched and chance(history, "shop.colour_search?", COLOUR_SEARCH_P):
        query = f"{spec.colour} {noun}"
        text = COLOUR_SEARCH.say(history, query=query, **t)
        return Action(actor, text, "search", {"query": query})
    if not searched or page is None or page.kind == "home":
        return Action(actor, SEARCH.say(history, **t), "search", {"query": noun})
    if page.kind == "results" and page.text.startswith("No results"):
        return Action(actor, RETRY.say(history, **t), "search", {"query": noun})
    if page.kind == "cart":
        return _click(actor, history, BACK_CART, "back", **t)
    if page.kind == "product":
        item = product(page.text)
        if item is not None and item.offers(spec.want):
            return item
        name = item.name if item else "product"
        missing = [f"{k} {v}" for k, v in spec.want if item is None or not item.offers([(k, v)])]
        return _click(
            actor, history, BACK, "back", product=name, missing=" and ".join(missing), **t
        )
    last_search = max(i for i, s in enumerate(history) if s.actor == actor and s.tool == "search")
    clicks = [s for s in history[last_search:] if s.actor == actor and s.tool == "click"]
    if clicks and SCAN.read(clicks[-1].content):  # scanned the next page: back to the first
        n = str(len(results(page.text)))
        return _click(actor, history, SCAN_BACK, "back", n=n, **t)
    if not clicks and "[next]" in page.text and chance(history, "shop.scan?", SCAN_P):
        return _click(actor, history, SCAN, "next", **t)
    opened = opened_since_search(history) | skip
    made = open_first_fit(history, actor, results(page.text), (noun, spec.desc, spec.cap), opened)
    if made is None and "[next]" in page.text:
        return _click(actor, history, NEXT_PAGE, "next", **t)
    return made


def configure(actor: str, history: Sequence[Step], since: int, item: Item, spec: Spec) -> Action:
    """Select each wanted option not yet selected, then add the item to the cart."""
    done = selected_names(history, since)
    for name, value in spec.want:
        if name not in done:
            values = ", ".join(dict(item.options).get(name, ()))
            text = SELECT.say(history, noun=item.word, name=name, values=values, value=value)
            return Action(actor, text, "select_option", {"name": name, "value": value})
    return Action(actor, ADD.say(history, desc=spec.desc), "add_to_cart", {})


def _open_named(history: Sequence[Step], since: int, item_id: str, desc: str) -> Action | None:
    """The buyer trusts the hand-off: when another page is on screen, it goes back to the
    results and opens the item it was named (once; None when it cannot)."""
    page = current_page(history)
    mine = [s for s in history[since:] if s.actor == "buyer" and s.tool == "click"]
    if page is None or item_id not in listed_ids(history):
        return None
    if page.kind == "results":
        if any((s.tool_args or {}).get("target") == item_id for s in mine):
            return None
        return _click("buyer", history, M.OPEN_NAMED, item_id, item=item_id, desc=desc)
    if page.kind != "product" or any(M.BACK_NAMED.read(s.content) for s in mine):
        return None
    return _click("buyer", history, M.BACK_NAMED, "back", item=item_id, desc=desc)


def _empty_cart(history: Sequence[Step], spec: Spec) -> Action | None:
    """The buyer's next click to empty the cart (None once it is empty)."""
    page, lines = current_page(history), cart(history)
    if not lines:
        return None
    if page is None or page.kind != "cart":
        return _click("buyer", history, M.TO_CART, "cart", desc=spec.desc)
    first = lines[0][0].item_id
    return _click("buyer", history, M.REMOVE, f"remove {first}", item=first, desc=spec.desc)


class ShopReactSystem(ScriptedReact):
    def act(self, history: Sequence[Step]) -> Action:
        spec = spec_of(history)
        if len(history) == 1:
            return Action("assistant", PLAN.say(history, **spec.target()))
        page = current_page(history)
        lines = cart(history)
        if page is not None and page.kind == "cart" and lines:
            if cart_matches(lines, spec):
                return Action("assistant", CHECKOUT.say(history, desc=spec.desc), "checkout", {})
            first = lines[0][0].item_id
            form = REMOVE_WRONG if len(lines) == 1 else M.REMOVE
            text = form.say(history, line=line_text(lines[0]), item=first, desc=spec.desc)
            return Action("assistant", text, "click", {"target": f"remove {first}"})
        found = find_item("assistant", history, 0, spec)
        if found is None:
            text = NONE_FITS.say(history, **spec.target())
            return Action("assistant", text, "checkout", {})
        if isinstance(found, Action):
            return found
        assert page is not None
        if not any(NOTE.read(s.content) for s in history[page.index :]):
            fields = {"product": found.name, "item": found.item_id, "price": found.price}
            return Action(
                "assistant", NOTE.say(history, options=spec.options, **fields, **spec.target())
            )
        if added(history, page.index):
            if task_chance(history, "shop.careful", VIEW_CART_P):
                return _click("assistant", history, VIEW_CART, "cart", desc=spec.desc)
            return Action("assistant", CHECKOUT.say(history, desc=spec.desc), "checkout", {})
        return configure("assistant", history, page.index, found, spec)


class ShopOrchestratorSystem(ScriptedOrchestrator):
    agents = ("orchestrator", "searcher", "buyer", "verifier")

    def orchestrate(self, history: Sequence[Step]) -> Action:
        spec = spec_of(history)
        t = spec.target()
        last = next((s for s in reversed(history) if s.is_agent_step), None)
        report = last.content if last is not None and addressee(last) == "orchestrator" else ""
        who = last.actor if last is not None else ""
        if who == "searcher" and (f := M.FOUND.fields(report)):
            if chance(history, "shop.check_item?", CHECK_ITEM_P):
                return _say(history, "orchestrator", M.CHECK_ITEM, item=f["item"], **t)
            return self._buy_request(history, f["item"], f["name"], spec)
        if who == "searcher" and M.NOT_FOUND.read(report):
            return _say(history, "orchestrator", M.GIVE_UP, **t)
        if who == "verifier" and M.ITEM_OK.read(report):
            asked = next((f for s in reversed(history) if (f := M.FOUND.fields(s.content))), None)
            if asked is not None:
                return self._buy_request(history, asked["item"], asked["name"], spec)
        dropped = (who == "verifier" and M.ITEM_BAD.fields(report)) or (
            who == "buyer" and M.BUYER_FAIL.fields(report)
        )
        if dropped:
            items = sorted(_excluded(history) | {dropped["item"]})
            return _say(history, "orchestrator", M.SEARCH_AGAIN, items=", ".join(items), **t)
        if who == "verifier" and M.REJECT.read(report):
            return _say(history, "orchestrator", M.CLEAR_REQUEST, **t)
        if who == "buyer" and (f := M.ADDED.fields(report)):
            return _say(history, "orchestrator", M.VERIFY_REQUEST, item=f["item"], **t)
        if skip := _excluded(history):
            items = ", ".join(sorted(skip))
            return _say(history, "orchestrator", M.SEARCH_AGAIN, items=items, **t)
        return _say(history, "orchestrator", M.SEARCH_REQUEST, **t)

    @staticmethod
    def _buy_request(history: Sequence[Step], item: str, name: str, spec: Spec) -> Action:
        return _say(history, "orchestrator", M.BUY, item=item, name=name, options=spec.options)

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        since = last_message_to(history, worker)
        request = history[since].content
        if worker == "searcher":
            return self._search(history, since, request)
        return self._buy(history, since, request)

    def _search(self, history: Sequence[Step], since: int, request: str) -> Action:
        spec = spec_of(history)
        f = M.SEARCH_AGAIN.fields(request)
        skip = frozenset(f["items"].split(", ")) if f else frozenset()
        found = find_item("searcher", history, since, spec, skip)
        if found is None:
            return _say(history, "searcher", M.NOT_FOUND, **spec.target())
        if isinstance(found, Action):
            return found
        return _say(
            history,
            "searcher",
            M.FOUND,
            item=found.item_id,
            name=found.name,
            price=found.price,
            **spec.target(),
        )

    def _buy(self, history: Sequence[Step], since: int, request: str) -> Action:
        spec = spec_of(history)
        t = spec.target()
        if M.CLEAR_REQUEST.read(request):
            emptying = _empty_cart(history, spec)
            return emptying or _say(history, "buyer", M.CLEARED, **t)
        f = M.BUY.fields(request)
        if f is None:
            return _say(history, "buyer", M.BUYER_FAIL, item="P0", why="no item was named", **t)
        item_id = f["item"]
        done = added(history, since)
        if done:
            line = done[-1].content.split("\n", 1)[0].removeprefix("Added to cart: ")
            return _say(history, "buyer", M.ADDED, item=item_id, line=line)
        last = history[-1]
        if last.actor == "select_option" and last.content.startswith("Error:"):
            reason = last.content.removeprefix("Error: ").rstrip(".")
            return _say(history, "buyer", M.BUYER_FAIL, item=item_id, why=reason, **t)
        page = current_page(history)
        if cart(history):
            emptying = _empty_cart(history, spec)
            assert emptying is not None
            return emptying
        if page is not None and page.kind == "cart":
            return _click("buyer", history, M.EMPTY_BACK, "back", desc=spec.desc)
        item = product(page.text) if page is not None and page.kind == "product" else None
        if item is None or item.item_id != item_id:
            opening = _open_named(history, since, item_id, spec.desc)
            if opening is not None:
                return opening
            return _say(history, "buyer", M.BUYER_FAIL, item=item_id, why="it is not open", **t)
        return configure("buyer", history, max(since, page.index), item, spec)

    def verify(self, history: Sequence[Step]) -> Action:
        spec = spec_of(history)
        t = spec.target()
        since = last_message_to(history, "verifier")
        request = history[since].content
        if f := M.CHECK_ITEM.fields(request):
            return self._check_item(history, f["item"], spec)
        if M.GIVE_UP.read(request):
            return Action("verifier", M.CLOSE.say(history, **t), "checkout", {})
        lines = cart(history)
        if cart_matches(lines, spec):
            return Action("verifier", M.APPROVE.say(history, **t), "checkout", {})
        if not lines:
            holds = "nothing"
        elif len(lines) > 1:
            holds = f"{len(lines)} items"
        else:
            opts = ", ".join(f"{k}={v}" for k, v in lines[0][1].items())
            holds = f"{lines[0][0].name} ({opts})"
        return _say(history, "verifier", M.REJECT, holds=holds, **t)

    @staticmethod
    def _check_item(history: Sequence[Step], item_id: str, spec: Spec) -> Action:
        """The open item against the target it was handed, read off the page on screen."""
        page = current_page(history)
        item = product(page.text) if page is not None and page.kind == "product" else None
        if item is None or item.item_id != item_id:
            why = "its page is not the one on screen"
        elif item.word != spec.noun:
            why = f"it is a {item.word}, not a {spec.noun}"
        elif item.cents >= spec.cap * 100:
            why = f"it costs {item.price}"
        elif not item.offers(spec.want):
            why = f"it does not offer {spec.options}"
        else:
            fields = {"item": item_id, "price": item.price, "cap": spec.cap}
            return _say(history, "verifier", M.ITEM_OK, options=spec.options, **fields)
        return _say(history, "verifier", M.ITEM_BAD, item=item_id, why=why, **spec.target())


def _excluded(history: Sequence[Step]) -> set[str]:
    """The items the orchestrator last told the searcher to leave out."""
    for step in reversed(history):
        if step.actor == "orchestrator" and (f := M.SEARCH_AGAIN.fields(step.content)):
            return set(f["items"].split(", "))
    return set()


SHOPPERS: dict[str, type] = {"react": ShopReactSystem, "orchestrator": ShopOrchestratorSystem}
"""The shopping systems written here (the ledger orchestrator is `web_shop.ledger`)."""
