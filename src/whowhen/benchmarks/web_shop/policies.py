"""Scripted reference policies for the web shop, deciding only from the visible history.

ReAct: search the product word, open the first result with that word whose price fits,
go back if it lacks the wanted colour or size, select each option, add to cart, check out.
Orchestrator: a searcher finds and opens the item, a buyer configures it and adds it to the
cart, and a verifier checks the cart's options against the instruction before checking
out (it does not re-check the price, trusting the searcher: an over-budget item gets
through, a wrong option or a doubled cart is sent back and fixed). The buyer trusts the
hand-off: if another item is on screen it goes back and opens the one it was named.
"""

from __future__ import annotations

from collections.abc import Sequence

from whowhen.agents.scripted import ScriptedOrchestrator, ScriptedReact, addressee, tell
from whowhen.benchmarks.web_shop.actions import (
    ADD,
    ADDED_RE,
    APPROVE,
    BUY_RE,
    CHECKOUT,
    CLICK,
    FOUND_RE,
    OPTION_RE,
    SEARCH_RE,
    SELECT,
    Want,
    buy_request,
    describe,
    found_report,
    search_request,
    search_text,
    want_of,
)
from whowhen.benchmarks.web_shop.pages import (
    Item,
    added,
    cart,
    current_page,
    last_message_to,
    listed_ids,
    observations,
    product,
    results,
    selected_names,
)
from whowhen.benchmarks.web_shop.tasks import parse_instruction
from whowhen.runtime import Action, Step


def _entry(item: Item) -> str:
    return f"{item.name} ({item.item_id}, {item.price})"


def find_item(
    actor: str, history: Sequence[Step], since: int, noun: str, want: Want, cap: int
) -> Action | Item | None:
    """The next browsing action, the open product once it offers what is wanted, or None
    when no result is left to try."""
    searched = [s for s in history[since:] if s.actor == actor and s.tool == "search"]
    page = current_page(history, since)
    if not searched or page is None or page.kind == "home":
        return Action(actor, search_text(noun), "search", {"query": noun})
    if page.kind == "cart":
        return Action(actor, "I will go back from the cart.", "click", {"target": "back"})
    if page.kind == "product":
        item = product(page.text)
        if item is not None and item.offers(want):
            return item
        name = item.name if item else "product"
        missing = [f"{k} {v}" for k, v in want if item is None or not item.offers([(k, v)])]
        return Action(
            actor,
            f"The {name} does not offer {' and '.join(missing)}; I will go back to the results.",
            "click",
            {"target": "back"},
        )
    last_search = max(i for i, s in enumerate(history) if s.actor == "search")
    opened = {
        it.item_id
        for s in observations(history, "click", last_search)
        if (it := product(s.content)) is not None
    }
    matches = [r for r in results(page.text) if r.word == noun]
    fits = [r for r in matches if r.cents < cap * 100 and r.item_id not in opened]
    if not fits:
        return None
    listing = ", ".join(_entry(r) for r in matches)
    text = CLICK.format(noun=noun, listing=listing, choice=_entry(fits[0]), cap=cap)
    return Action(actor, text, "click", {"target": fits[0].item_id})


def configure(actor: str, history: Sequence[Step], since: int, item: Item, want: Want) -> Action:
    """Select each wanted option not yet selected, then add the item to the cart."""
    done = selected_names(history, since)
    for name, value in want:
        if name not in done:
            values = ", ".join(dict(item.options).get(name, ()))
            text = SELECT.format(noun=item.word, name=name, values=values, value=value)
            return Action(actor, text, "select_option", {"name": name, "value": value})
    return Action(actor, ADD.format(noun=item.word), "add_to_cart", {})


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
        return Action("buyer", f"I will open item {item_id}.", "click", {"target": item_id})
    text = f"Item {item_id} is not the page on screen; I will go back to the results."
    if page.kind != "product" or any(s.content == text for s in mine):
        return None
    return Action("buyer", text, "click", {"target": "back"})


class ShopReactSystem(ScriptedReact):
    def act(self, history: Sequence[Step]) -> Action:
        colour, noun, size, cap = parse_instruction(history[0].content)
        want = want_of(colour, size)
        found = find_item("assistant", history, 0, noun, want, cap)
        if found is None:
            text = f"No {noun} on the results page fits the instruction; I will check out."
            return Action("assistant", text, "checkout", {})
        if isinstance(found, Action):
            return found
        page = current_page(history)
        assert page is not None
        if added(history, page.index):
            return Action("assistant", CHECKOUT.format(noun=noun), "checkout", {})
        return configure("assistant", history, page.index, found, want)


class ShopOrchestratorSystem(ScriptedOrchestrator):
    agents = ("orchestrator", "searcher", "buyer", "verifier")

    def orchestrate(self, history: Sequence[Step]) -> Action:
        colour, noun, size, cap = parse_instruction(history[0].content)
        last = next((s for s in reversed(history) if s.is_agent_step), None)
        report = last.content if last is not None and addressee(last) == "orchestrator" else ""
        found = FOUND_RE.search(report) if last and last.actor == "searcher" else None
        if found:
            request = buy_request(found.group(1), found.group(2), want_of(colour, size))
            return tell("orchestrator", "buyer", request)
        adds = ADDED_RE.search(report) if last and last.actor == "buyer" else None
        if adds:
            return tell(
                "orchestrator",
                "verifier",
                f"the buyer added item {adds.group(1)} to the cart. Check the cart against "
                "the instruction and check out if it matches.",
            )
        return tell(
            "orchestrator",
            "searcher",
            search_request(colour, noun, size, cap),
        )

    def work(self, worker: str, history: Sequence[Step]) -> Action:
        since = last_message_to(history, worker)
        request = history[since].content
        if worker == "searcher":
            return self._search(history, since, request)
        return self._buy(history, since, request)

    def _search(self, history: Sequence[Step], since: int, request: str) -> Action:
        m = SEARCH_RE.search(request)
        if m is None:
            return tell("searcher", "orchestrator", "I could not tell what to look for.")
        colour, noun, size, cap = m.group(1), m.group(2), m.group(3), int(m.group(4))
        found = find_item("searcher", history, since, noun, want_of(colour, size), cap)
        if found is None:
            return tell("searcher", "orchestrator", f"no {noun} on the results page fits.")
        if isinstance(found, Action):
            return found
        return tell(
            "searcher",
            "orchestrator",
            found_report(found.item_id, found.name, found.price),
        )

    def _buy(self, history: Sequence[Step], since: int, request: str) -> Action:
        m = BUY_RE.search(request)
        if m is None:
            return tell("buyer", "orchestrator", "I could not add the item: no item was named.")
        item_id, want = m.group(1), OPTION_RE.findall(m.group(3))
        done = added(history, since)
        if done:
            line = done[-1].content.split("\n", 1)[0].removeprefix("Added to cart: ")
            return tell("buyer", "orchestrator", f"added item {item_id} to the cart: {line}.")
        last = history[-1]
        if last.actor == "select_option" and last.content.startswith("Error:"):
            reason = last.content.removeprefix("Error: ").rstrip(".")
            return tell("buyer", "orchestrator", f"I could not add item {item_id}: {reason}.")
        page = current_page(history)
        lines = cart(history)
        if lines and (page is None or page.kind != "cart"):
            text = "The cart still holds an earlier item; I will open the cart to empty it."
            return Action("buyer", text, "click", {"target": "cart"})
        if page is not None and page.kind == "cart":
            if lines:
                first = lines[0][0].item_id
                text = f"I will remove {first} from the cart."
                return Action("buyer", text, "click", {"target": f"remove {first}"})
            text = "The cart is empty; I will go back to the product page."
            return Action("buyer", text, "click", {"target": "back"})
        item = product(page.text) if page is not None and page.kind == "product" else None
        if item is None or item.item_id != item_id:
            opening = _open_named(history, since, item_id)
            if opening is not None:
                return opening
            return tell("buyer", "orchestrator", f"I could not add item {item_id}: it is not open.")
        return configure("buyer", history, max(since, page.index), item, want)

    def verify(self, history: Sequence[Step]) -> Action:
        colour, noun, size, _ = parse_instruction(history[0].content)
        desc, want = describe(colour, noun, size), dict(want_of(colour, size))
        lines = cart(history)
        if len(lines) == 1 and lines[0][1] == want and lines[0][0].word == noun:
            return Action("verifier", APPROVE.format(desc=desc), "checkout", {})
        if not lines:
            holds = "nothing"
        elif len(lines) > 1:
            holds = f"{len(lines)} items"
        else:
            opts = ", ".join(f"{k}={v}" for k, v in lines[0][1].items())
            holds = f"{lines[0][0].name} ({opts})"
        return tell(
            "verifier",
            "orchestrator",
            f"Check failed: the cart holds {holds}, but the instruction asks for one {desc}. "
            "Please fix the cart.",
        )


POLICIES: dict[str, type] = {"react": ShopReactSystem, "orchestrator": ShopOrchestratorSystem}
"""System name -> this benchmark's scripted reference policy."""
