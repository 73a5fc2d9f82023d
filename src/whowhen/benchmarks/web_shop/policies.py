"""Scripted reference policies for the web shop, deciding only from the visible history.

ReAct: search the product word (sometimes a narrower search with the colour first, which
finds nothing, since names carry no colours), open the first result with that word whose
price fits, go back if it lacks the wanted colour or size, page on when a page has no
untried fit, select each option, add to cart, (a careful agent looks at the cart once)
and check out. Orchestrator: a searcher finds and opens the item; the orchestrator
sometimes has the verifier check the open item against the instruction first (price and
options off the page on screen: a wrong item is sent back and searched again); a buyer
configures it and adds it to the cart, and the verifier checks the cart's options against
the instruction before checking out (it does not re-check the price there, trusting the
earlier steps: an over-budget item it did not check gets through, a wrong option or a
doubled cart is sent back and fixed). The buyer trusts the hand-off: if another item is on
screen it goes back and opens the one it was named. Wordings and detours are drawn with
`whowhen.agents.phrasing` from the task text and the step index.
"""

from __future__ import annotations

from collections.abc import Sequence

from whowhen.agents.phrasing import Form, chance, task_chance
from whowhen.agents.scripted import ScriptedOrchestrator, ScriptedReact, addressee
from whowhen.benchmarks.web_shop.actions import (
    ADD,
    ADDED,
    APPROVE,
    BACK,
    BACK_CART,
    BACK_NAMED,
    BUY,
    BUYER_FAIL,
    CHECK_ITEM,
    CHECKOUT,
    COLOUR_SEARCH,
    EMPTY_BACK,
    FOUND,
    ITEM_BAD,
    ITEM_OK,
    NEXT_PAGE,
    NONE_FITS,
    NOT_FOUND,
    OPEN_NAMED,
    OPTION_RE,
    REJECT,
    REMOVE,
    RETRY,
    SCAN,
    SCAN_BACK,
    SEARCH,
    SEARCH_REQUEST,
    SELECT,
    TO_CART,
    VERIFY_REQUEST,
    VIEW_CART,
    Want,
    article,
    describe,
    open_first_fit,
    options_text,
    want_of,
)
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
from whowhen.benchmarks.web_shop.tasks import parse_instruction
from whowhen.runtime import Action, Step

COLOUR_SEARCH_P, CHECK_ITEM_P, VIEW_CART_P, SCAN_P = 0.6, 0.5, 0.8, 0.7


def _say(history: Sequence[Step], sender: str, form: Form, **fields: object) -> Action:
    return Action(sender, form.say(history, **fields))


def find_item(
    actor: str, history: Sequence[Step], since: int, noun: str, want: Want, cap: int
) -> Action | Item | None:
    """The next browsing action, the open product once it offers what is wanted, or None
    when no result is left to try."""
    searched = [s for s in history[since:] if s.actor == actor and s.tool == "search"]
    page = current_page(history, since)
    if not searched:
        if chance(history, "shop.colour_search?", COLOUR_SEARCH_P):
            query = f"{want[0][1]} {noun}"
            text = COLOUR_SEARCH.say(history, query=query)
            return Action(actor, text, "search", {"query": query})
        return Action(actor, SEARCH.say(history, noun=noun), "search", {"query": noun})
    if page is None or page.kind == "home":
        return Action(actor, SEARCH.say(history, noun=noun), "search", {"query": noun})
    if page.kind == "results" and page.text.startswith("No results"):
        return Action(actor, RETRY.say(history, noun=noun), "search", {"query": noun})
    if page.kind == "cart":
        return Action(actor, BACK_CART.say(history), "click", {"target": "back"})
    if page.kind == "product":
        item = product(page.text)
        if item is not None and item.offers(want):
            return item
        name = item.name if item else "product"
        missing = [f"{k} {v}" for k, v in want if item is None or not item.offers([(k, v)])]
        text = BACK.say(history, product=name, missing=" and ".join(missing))
        return Action(actor, text, "click", {"target": "back"})
    last_search = max(i for i, s in enumerate(history) if s.actor == actor and s.tool == "search")
    clicks = [s for s in history[last_search:] if s.actor == actor and s.tool == "click"]
    if clicks and SCAN.read(clicks[-1].content):  # scanned the next page: back to the first
        n = str(len(results(page.text)))
        text = SCAN_BACK.say(history, noun=noun, n=n)
        return Action(actor, text, "click", {"target": "back"})
    if not clicks and "[next]" in page.text and chance(history, "shop.scan?", SCAN_P):
        return Action(actor, SCAN.say(history, noun=noun), "click", {"target": "next"})
    made = open_first_fit(
        history, actor, results(page.text), noun, cap, opened_since_search(history)
    )
    if made is None and "[next]" in page.text:
        text = NEXT_PAGE.say(history, noun=noun, cap=cap)
        return Action(actor, text, "click", {"target": "next"})
    return made


def configure(actor: str, history: Sequence[Step], since: int, item: Item, want: Want) -> Action:
    """Select each wanted option not yet selected, then add the item to the cart."""
    done = selected_names(history, since)
    for name, value in want:
        if name not in done:
            values = ", ".join(dict(item.options).get(name, ()))
            text = SELECT.say(history, noun=item.word, name=name, values=values, value=value)
            return Action(actor, text, "select_option", {"name": name, "value": value})
    return Action(actor, ADD.say(history, noun=item.word), "add_to_cart", {})


def _open_named(history: Sequence[Step], since: int, item_id: str) -> Action | None:
    """The buyer trusts the hand-off: when another page is on screen, it goes back to the
    results and opens the item it was named (once; None when it cannot)."""
    page = current_page(history)
    mine = [s for s in history[since:] if s.actor == "buyer" and s.tool == "click"]
    if page is None or item_id not in listed_ids(history):
        return None
    if page.kind == "results":
        if any((s.tool_args or {}).get("target") == item_id for s in mine):
            return None
        text = OPEN_NAMED.say(history, item=item_id)
        return Action("buyer", text, "click", {"target": item_id})
    if page.kind != "product" or any(BACK_NAMED.read(s.content) for s in mine):
        return None
    return Action("buyer", BACK_NAMED.say(history, item=item_id), "click", {"target": "back"})


class ShopReactSystem(ScriptedReact):
    def act(self, history: Sequence[Step]) -> Action:
        colour, noun, size, cap = parse_instruction(history[0].content)
        want = want_of(colour, size)
        page = current_page(history)
        if page is not None and page.kind == "cart" and added(history, 0):
            return Action("assistant", CHECKOUT.say(history, noun=noun), "checkout", {})
        found = find_item("assistant", history, 0, noun, want, cap)
        if found is None:
            return Action("assistant", NONE_FITS.say(history, noun=noun), "checkout", {})
        if isinstance(found, Action):
            return found
        assert page is not None
        if added(history, page.index):
            if task_chance(history, "shop.careful", VIEW_CART_P):
                text = VIEW_CART.say(history, noun=noun)
                return Action("assistant", text, "click", {"target": "cart"})
            return Action("assistant", CHECKOUT.say(history, noun=noun), "checkout", {})
        return configure("assistant", history, page.index, found, want)


class ShopOrchestratorSystem(ScriptedOrchestrator):
    agents = ("orchestrator", "searcher", "buyer", "verifier")

    def orchestrate(self, history: Sequence[Step]) -> Action:
        colour, noun, size, cap = parse_instruction(history[0].content)
        want = want_of(colour, size)
        last = next((s for s in reversed(history) if s.is_agent_step), None)
        report = last.content if last is not None and addressee(last) == "orchestrator" else ""
        who = last.actor if last is not None else ""
        if who == "searcher" and (f := FOUND.fields(report)):
            if chance(history, "shop.check_item?", CHECK_ITEM_P):
                return _say(history, "orchestrator", CHECK_ITEM, item=f["item"])
            return self._buy_request(history, f["item"], f["name"], want)
        if who == "verifier" and ITEM_OK.read(report):
            asked = next(
                (
                    f
                    for s in reversed(history)
                    if s.actor == "searcher" and (f := FOUND.fields(s.content))
                ),
                None,
            )
            if asked is not None:
                return self._buy_request(history, asked["item"], asked["name"], want)
        if who == "buyer" and (f := ADDED.fields(report)):
            return _say(history, "orchestrator", VERIFY_REQUEST, item=f["item"])
        desc = describe(colour, noun, size)
        return _say(
            history, "orchestrator", SEARCH_REQUEST, article=article(colour), desc=desc, cap=cap
        )

    @staticmethod
    def _buy_request(history: Sequence[Step], item: str, name: str, want: Want) -> Action:
        return _say(history, "orchestrator", BUY, item=item, name=name, options=options_text(want))

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        since = last_message_to(history, worker)
        request = history[since].content
        if worker == "searcher":
            return self._search(history, since, request)
        return self._buy(history, since, request)

    def _search(self, history: Sequence[Step], since: int, request: str) -> Action:
        f = SEARCH_REQUEST.fields(request)
        parsed = (
            parse_instruction(f"Buy {f['article']} {f['desc']} under ${f['cap']}.") if f else None
        )
        if parsed is None:
            return _say(history, "searcher", NOT_FOUND, noun="item")
        colour, noun, size, cap = parsed
        found = find_item("searcher", history, since, noun, want_of(colour, size), cap)
        if found is None:
            return _say(history, "searcher", NOT_FOUND, noun=noun)
        if isinstance(found, Action):
            return found
        return _say(
            history, "searcher", FOUND, item=found.item_id, name=found.name, price=found.price
        )

    def _buy(self, history: Sequence[Step], since: int, request: str) -> Action:
        f = BUY.fields(request)
        if f is None:
            return _say(history, "buyer", BUYER_FAIL, item="P0", why="no item was named")
        item_id, want = f["item"], OPTION_RE.findall(f["options"])
        done = added(history, since)
        if done:
            line = done[-1].content.split("\n", 1)[0].removeprefix("Added to cart: ")
            return _say(history, "buyer", ADDED, item=item_id, line=line)
        last = history[-1]
        if last.actor == "select_option" and last.content.startswith("Error:"):
            reason = last.content.removeprefix("Error: ").rstrip(".")
            return _say(history, "buyer", BUYER_FAIL, item=item_id, why=reason)
        page = current_page(history)
        lines = cart(history)
        if lines and (page is None or page.kind != "cart"):
            return Action("buyer", TO_CART.say(history), "click", {"target": "cart"})
        if page is not None and page.kind == "cart":
            if lines:
                first = lines[0][0].item_id
                text = REMOVE.say(history, item=first)
                return Action("buyer", text, "click", {"target": f"remove {first}"})
            return Action("buyer", EMPTY_BACK.say(history), "click", {"target": "back"})
        item = product(page.text) if page is not None and page.kind == "product" else None
        if item is None or item.item_id != item_id:
            opening = _open_named(history, since, item_id)
            if opening is not None:
                return opening
            return _say(history, "buyer", BUYER_FAIL, item=item_id, why="it is not open")
        return configure("buyer", history, max(since, page.index), item, want)

    def verify(self, history: Sequence[Step]) -> Action:
        colour, noun, size, cap = parse_instruction(history[0].content)
        desc, want = describe(colour, noun, size), want_of(colour, size)
        since = last_message_to(history, "verifier")
        if f := CHECK_ITEM.fields(history[since].content):
            return self._check_item(history, f["item"], noun, want, cap)
        lines = cart(history)
        if len(lines) == 1 and lines[0][1] == dict(want) and lines[0][0].word == noun:
            return Action("verifier", APPROVE.say(history, desc=desc), "checkout", {})
        if not lines:
            holds = "nothing"
        elif len(lines) > 1:
            holds = f"{len(lines)} items"
        else:
            opts = ", ".join(f"{k}={v}" for k, v in lines[0][1].items())
            holds = f"{lines[0][0].name} ({opts})"
        return _say(history, "verifier", REJECT, holds=holds, desc=desc)

    @staticmethod
    def _check_item(
        history: Sequence[Step], item_id: str, noun: str, want: Want, cap: int
    ) -> Action:
        """The open item against the instruction, read off the page on screen."""
        page = current_page(history)
        item = product(page.text) if page is not None and page.kind == "product" else None
        if item is None or item.item_id != item_id:
            why = "its page is not the one on screen"
        elif item.word != noun:
            why = f"it is a {item.word}, not a {noun}"
        elif item.cents >= cap * 100:
            why = f"it costs {item.price}, over the ${cap} budget"
        elif not item.offers(want):
            why = f"it does not offer {options_text(want)}"
        else:
            return _say(
                history,
                "verifier",
                ITEM_OK,
                item=item_id,
                price=item.price,
                cap=cap,
                options=options_text(want),
            )
        return _say(history, "verifier", ITEM_BAD, item=item_id, why=why)


POLICIES: dict[str, type] = {"react": ShopReactSystem, "orchestrator": ShopOrchestratorSystem}
"""System name -> this benchmark's scripted reference policy."""
