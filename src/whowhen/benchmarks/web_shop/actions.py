"""The web shop policies' messages and actions: their wordings (`Form`s, three or more
each), builders and the parsers that read them back, shared with the operators."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.web_shop.pages import Item
from whowhen.runtime import Action, Step

Want = list[tuple[str, str]]
_ENTRY = r"[A-Z][\w ]*? \(P\d+, \$\d+\.\d\d\)"
P = {
    "cap": r"\d+",
    "noun": r"\w+",
    "name": r"colour|size",
    "value": r"\w+",
    "item": r"P\d+",
    "choice": _ENTRY,
    "desc": r"\w+ \w+(?: in size \w+)?",
    "article": r"an?",
    "price": r"\$\d+\.\d\d",
    "query": r"[\w ]+",
}

SEARCH = Form(
    "shop.search",
    (
        "I will search the shop for the {noun}.",
        "Searching the shop for {noun} to see what it offers.",
        "Let me look up {noun} in the shop; the results page should list the candidates.",
    ),
    **P,
)
COLOUR_SEARCH = Form(
    "shop.colour_search",
    (
        "I will search for '{query}' directly; maybe the names carry the colour.",
        "Trying a narrow search first: '{query}'.",
        "A search for '{query}' could go straight to the right item, so I will try it.",
    ),
    **P,
)
RETRY = Form(
    "shop.retry",
    (
        "No item names carry the colour, so I will search for the {noun} alone.",
        "Nothing for that; the colour must be an option. Searching for {noun} instead.",
        "That search was too narrow. I will search the shop for the {noun} now.",
    ),
    **P,
)
CLICK = Form(
    "shop.open",
    (
        "The results list these {noun}s: {listing}. {choice} fits the ${cap} budget; "
        "I will open it.",
        "Candidates on this page: {listing}. The first {noun} under ${cap} that I have not "
        "opened is {choice}; I will open it.",
        "Under the ${cap} limit, {choice} is the next {noun} to try (listed: {listing}). "
        "I will open it.",
    ),
    **P,
)
NEXT_PAGE = Form(
    "shop.next_page",
    (
        "No {noun} on this page fits the ${cap} budget that I have not tried; I will open the "
        "next page.",
        "Nothing left to try here under ${cap}. I will open the next page of {noun}s.",
        "This page has no untried {noun} under ${cap}, and there are more results; I will open "
        "the next page.",
    ),
    **P,
)
SCAN = Form(
    "shop.scan",
    (
        "Before opening anything, I will look at the next page to see all the {noun}s listed.",
        "There are more results; I will glance at the next page first to compare prices.",
        "Let me see the rest of the {noun}s on the next page before choosing.",
    ),
    **P,
)
SCAN_BACK = Form(
    "shop.scan_back",
    (
        "This page adds {n} more {noun}s. I will go back to the first page and start with the "
        "first that fits.",
        "Seen the rest ({n} more). Back to the first page to open the candidates in order.",
        "{n} more {noun}s here; the first page comes first, so I will go back.",
    ),
    **{**P, "n": r"\d+"},
)
BACK = Form(
    "shop.back",
    (
        "The {product} does not offer {missing}; I will go back to the results.",
        "{product} has no {missing}, so it is not the one. I will go back to the results.",
        "No {missing} for the {product}. I will go back and try another.",
    ),
    **P,
)
BACK_CART = Form(
    "shop.back_cart",
    (
        "I will go back from the cart.",
        "Nothing to do on the cart page yet; I will go back.",
        "The cart page is not where I need to be now, so I will go back.",
    ),
)
SELECT = Form(
    "shop.select",
    (
        "Options for the {noun}'s {name}: {values}. I will select {name} {value}.",
        "The {noun} comes in {name} {values}; I will select {name} {value}.",
        "I will select {name} {value} (the {noun} lists {values}).",
    ),
    **P,
)
ADD = Form(
    "shop.add",
    (
        "All options for the {noun} are set; I will add it to the cart.",
        "Options chosen. I will add the {noun} to the cart.",
        "Everything the {noun} needs is selected, so I will add it to the cart.",
    ),
    **P,
)
VIEW_CART = Form(
    "shop.view_cart",
    (
        "Before paying, I will open the cart to check that the {noun} is there with the right "
        "options.",
        "Let me look at the cart once before checking out the {noun}; I will open the cart.",
        "I will open the cart and check the {noun}'s line.",
    ),
    **P,
)
CHECKOUT = Form(
    "shop.checkout",
    (
        "The {noun} is in the cart; I will check out.",
        "The cart has the {noun} with the options asked for. I will check out.",
        "Done with the {noun}: it is in the cart, so I will check out.",
    ),
    **P,
)
NONE_FITS = Form(
    "shop.none_fits",
    (
        "No {noun} on the results fits the instruction; I will check out.",
        "I found no {noun} that fits, so there is nothing to buy. I will check out.",
        "Every {noun} listed misses a constraint; I will check out with what there is.",
    ),
    **P,
)
APPROVE = Form(
    "shop.approve",
    (
        "The cart holds one {desc}, as the instruction asks; I will check out.",
        "One {desc} in the cart, matching the instruction. I will check out.",
        "Cart checked: exactly one {desc}. I will check out.",
    ),
    **P,
)
REJECT = Form(
    "shop.reject",
    (
        "To orchestrator: Check failed: the cart holds {holds}, but the instruction asks for "
        "one {desc}. Please fix the cart.",
        "To orchestrator: the cart is not right: it holds {holds}, and the instruction asks "
        "for one {desc}. Please fix the cart.",
        "To orchestrator: I cannot approve {holds}; the instruction asks for one {desc}. "
        "Please fix the cart.",
    ),
    **P,
)
SEARCH_REQUEST = Form(
    "shop.search_request",
    (
        "To searcher: find {article} {desc} under ${cap} and leave its product page open.",
        "To searcher: please look for {article} {desc} under ${cap}; leave its product page open.",
        "To searcher: we need {article} {desc} under ${cap}. Find it and leave its product "
        "page open.",
    ),
    **P,
)
FOUND = Form(
    "shop.found",
    (
        "To orchestrator: found item {item} ({name}, {price}); its product page is open.",
        "To orchestrator: item {item} ({name}, {price}) fits; I left its product page open.",
        "To orchestrator: the match is item {item} ({name}, {price}). Its page is open.",
    ),
    **{**P, "name": r"[A-Z][\w ]*?"},
)
NOT_FOUND = Form(
    "shop.not_found",
    (
        "To orchestrator: no {noun} on the results page fits.",
        "To orchestrator: I found no {noun} that fits the request.",
        "To orchestrator: none of the {noun}s listed fits.",
    ),
    **P,
)
BUY = Form(
    "shop.buy",
    (
        "To buyer: item {item} ({name}) is open; select {options}, then add it to the cart.",
        "To buyer: please select {options} on item {item} ({name}), which is open, then add "
        "it to the cart.",
        "To buyer: the searcher opened item {item} ({name}). Select {options} and add it to "
        "the cart.",
    ),
    **{**P, "name": r"[A-Z][\w ]*?", "options": r"(?:colour|size) \w+(?: and size \w+)?"},
)
CHECK_ITEM = Form(
    "shop.check_item",
    (
        "To verifier: before buying, please check that the open item {item} fits the instruction.",
        "To verifier: the searcher opened item {item}; does it fit the instruction?",
        "To verifier: a quick check first: is item {item}, on screen now, what we need?",
    ),
    **P,
)
ITEM_OK = Form(
    "shop.item_ok",
    (
        "To orchestrator: item {item} costs {price}, under ${cap}, and offers {options}; go ahead.",
        "To orchestrator: checked, item {item} ({price}) is under ${cap} and offers {options}.",
        "To orchestrator: item {item} fits: {price} is below ${cap} and it has {options}.",
    ),
    **{**P, "options": r"(?:colour|size) \w+(?: and size \w+)?"},
)
ITEM_BAD = Form(
    "shop.item_bad",
    (
        "To orchestrator: Check failed: item {item} does not fit ({why}). Please search again.",
        "To orchestrator: item {item} is not the one: {why}. Please search again.",
        "To orchestrator: I cannot approve item {item}, {why}. Please search again.",
    ),
    **{**P, "why": r".+?"},
)
VERIFY_REQUEST = Form(
    "shop.verify_request",
    (
        "To verifier: the buyer added item {item} to the cart. Check the cart against the "
        "instruction and check out if it matches.",
        "To verifier: item {item} is in the cart. Please check it against the instruction, "
        "then check out.",
        "To verifier: please review the cart (item {item} was added) and check out if it "
        "matches the instruction.",
    ),
    **P,
)
ADDED = Form(
    "shop.added",
    (
        "To orchestrator: added item {item} to the cart: {line}.",
        "To orchestrator: item {item} is in the cart now ({line}).",
        "To orchestrator: done, the cart line reads {line} for item {item}.",
    ),
    **{**P, "line": r"P\d+ .+? \| \$\d+\.\d\d"},
)
OPEN_NAMED = Form(
    "shop.open_named",
    (
        "I will open item {item}.",
        "Item {item} is on this results page; I will open it.",
        "Opening item {item}, the one I was handed. I will open it.",
    ),
    **P,
)
BACK_NAMED = Form(
    "shop.back_named",
    (
        "Item {item} is not the page on screen; I will go back to the results.",
        "This is not item {item}, so I will go back to the results.",
        "The page on screen is another item than {item}; I will go back to the results.",
    ),
    **P,
)
TO_CART = Form(
    "shop.to_cart",
    (
        "The cart still holds an earlier item; I will open the cart to empty it.",
        "Something is already in the cart, so I will open the cart to empty it first.",
        "An earlier line is still in the cart; I will open the cart to empty it.",
    ),
)
REMOVE = Form(
    "shop.remove",
    (
        "I will remove {item} from the cart.",
        "Item {item} should not stay in the cart; I will remove {item} from the cart.",
        "First I will remove {item} from the cart.",
    ),
    **P,
)
EMPTY_BACK = Form(
    "shop.empty_back",
    (
        "The cart is empty; I will go back to the product page.",
        "Cart emptied. I will go back to the product page.",
        "Nothing left in the cart, so I will go back to the product page.",
    ),
)
BUYER_FAIL = Form(
    "shop.buyer_fail",
    (
        "To orchestrator: I could not add item {item}: {why}.",
        "To orchestrator: item {item} could not be added, {why}.",
        "To orchestrator: adding item {item} failed: {why}.",
    ),
    **{**P, "why": r".+?"},
)
LISTED = re.compile(r"([A-Z][\w ]*?) \((P\d+), \$(\d+)\.(\d\d)\)")
OPTION_RE = re.compile(r"(colour|size) (\w+)")
DESC_RE = re.compile(r"^(\w+) (\w+)(?: in size (\w+))?$")


def want_of(colour: str, size: str | None) -> Want:
    return [("colour", colour)] + ([("size", size)] if size else [])


def describe(colour: str, noun: str, size: str | None) -> str:
    return f"{colour} {noun}" + (f" in size {size}" if size else "")


def options_text(want: Want) -> str:
    return " and ".join(f"{k} {v}" for k, v in want)


def article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def entry(item: Item) -> str:
    """An item as the click message lists it: `Name (P1234, $12.00)`."""
    return f"{item.name} ({item.item_id}, {item.price})"


def listed_items(listing: str) -> list[Item]:
    """The items a click message lists."""
    return [Item(i, name, int(d) * 100 + int(c)) for name, i, d, c in LISTED.findall(listing)]


def open_first_fit(
    history: Sequence[Step],
    actor: str,
    listed: Sequence[Item],
    noun: str,
    cap: int,
    opened: Collection[str],
    wording: int | None = None,
) -> Action | None:
    """Open the first listed item with the product word that fits the budget and was not
    opened yet, saying which items were listed and why this one (None if none fits).
    Operators call it with a wrong belief (a misread budget, mixed-up prices) and the
    original's `wording`, so their clicks read exactly like the policy's."""
    matches = [r for r in listed if r.word == noun]
    fits = [r for r in matches if r.cents < cap * 100 and r.item_id not in opened]
    if not fits:
        return None
    fields = {
        "noun": noun,
        "listing": ", ".join(entry(r) for r in matches),
        "choice": entry(fits[0]),
        "cap": cap,
    }
    text = CLICK.at(wording, **fields) if wording is not None else CLICK.say(history, **fields)
    return Action(actor, text, "click", {"target": fits[0].item_id})
