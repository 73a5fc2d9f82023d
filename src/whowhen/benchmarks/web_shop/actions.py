"""The web shop agents' tool steps: their wordings (`Form`s, three each), builders and the
parsers that read them back, shared with the operators (the messages are in `messages`).

Why every wording names what the agent is after ({desc}: "red lamp in size M", and the
budget where the step depends on it): the agents take their working belief from the
latest step that stated it (`belief.spec_of`), so a step that states a wrong target is
carried on to the purchase, and any kind of step can be where a run goes wrong."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from whowhen.agents.phrasing import Form
from whowhen.benchmarks.web_shop.pages import Item
from whowhen.runtime import Action, Step

Want = list[tuple[str, str]]
_ENTRY = r"[A-Z][\w ]*? \(P\d+, \$\d+\.\d\d\)"
_OPTIONS = r"(?:colour|size) \w+(?: and size \w+)?"
P = {
    "cap": r"\d+",
    "noun": r"\w+",
    "name": r"colour|size",
    "value": r"\w+",
    "item": r"P\d+",
    "items": r"P\d+(?:, P\d+)*",
    "choice": _ENTRY,
    "desc": r"\w+ \w+(?: in size \w+)?",
    "article": r"an?",
    "price": r"\$\d+\.\d\d",
    "query": r"[\w ]+",
    "options": _OPTIONS,
    "missing": _OPTIONS,
    "line": r"P\d+ .+? \| \$\d+\.\d\d",
}

SEARCH = Form(
    "shop.search",
    (
        "I need {article} {desc} under ${cap}; I will search the shop for {noun}.",
        "Searching the shop for {noun} to find {article} {desc} under ${cap}.",
        "Let me look up {noun} in the shop; the results should include {article} {desc} "
        "under ${cap}.",
    ),
    **P,
)
COLOUR_SEARCH = Form(
    "shop.colour_search",
    (
        "I need {article} {desc} under ${cap}. I will search for '{query}' directly; maybe the "
        "names carry the colour.",
        "Trying a narrow search first for {article} {desc} under ${cap}: '{query}'.",
        "A search for '{query}' could go straight to {article} {desc} under ${cap}, so I will "
        "try it.",
    ),
    **P,
)
RETRY = Form(
    "shop.retry",
    (
        "No item names carry the colour, so I will search for {noun} alone and look for "
        "{article} {desc} under ${cap} among them.",
        "Nothing for that; the colour must be an option. Searching for {noun} instead, for "
        "{article} {desc} under ${cap}.",
        "That search was too narrow. I will search the shop for {noun} now; I still need "
        "{article} {desc} under ${cap}.",
    ),
    **P,
)
CLICK = Form(
    "shop.open",
    (
        "The results list these {noun}s: {listing}. {choice} fits the ${cap} budget; "
        "I will open it and see if it is the {desc} I need.",
        "Candidates on this page: {listing}. The first {noun} under ${cap} that I have not "
        "opened is {choice}; I will open it to check for the {desc}.",
        "Under the ${cap} limit, {choice} is the next {noun} to try (listed: {listing}); I "
        "will open it to see if it is the {desc}.",
    ),
    **P,
)
NEXT_PAGE = Form(
    "shop.next_page",
    (
        "On this page no {noun} that I have not tried fits the ${cap} budget; I will open the "
        "next page to look for the {desc}.",
        "Nothing left to try here under ${cap}. I will open the next page of {noun}s for the "
        "{desc}.",
        "This page has no untried {noun} under ${cap}, and there are more results; I will open "
        "the next page to find the {desc}.",
    ),
    **P,
)
SCAN = Form(
    "shop.scan",
    (
        "Before opening anything, I will look at the next page to see all the {noun}s that "
        "could be the {desc}.",
        "There are more results; I will glance at the next page first to compare prices for "
        "the {desc}.",
        "Let me see the rest of the {noun}s on the next page before choosing the {desc}.",
    ),
    **P,
)
SCAN_BACK = Form(
    "shop.scan_back",
    (
        "This page adds {n} more {noun}s. I will go back to the first page and start with the "
        "first that could be the {desc}.",
        "Seen the rest ({n} more). Back to the first page to open the candidates for the "
        "{desc} in order.",
        "There are {n} more {noun}s here; the first page comes first, so I will go back and "
        "look for the {desc} there.",
    ),
    **{**P, "n": r"\d+"},
)
BACK = Form(
    "shop.back",
    (
        "The {product} does not offer {missing}, so it is not the {desc}; I will go back to "
        "the results.",
        "It turns out {product} has no {missing}, so it is not the {desc} I need. I will go "
        "back to the results.",
        "Not this one: the {product} has no {missing}. I will go back and try another for the "
        "{desc}.",
    ),
    **P,
)
BACK_CART = Form(
    "shop.back_cart",
    (
        "The cart holds no {desc} yet; I will go back.",
        "Nothing to do on the cart page until I have the {desc}; I will go back.",
        "The cart page is not where I find the {desc}, so I will go back.",
    ),
    **P,
)
SELECT = Form(
    "shop.select",
    (
        "Options for the {noun}'s {name}: {values}. I will select {name} {value}.",
        "On this page the {noun} comes in {name} {values}; I will select {name} {value}.",
        "I will select {name} {value} (the {noun} lists {values}).",
    ),
    **P,
)
ADD = Form(
    "shop.add",
    (
        "All options for the {desc} are set; I will add it to the cart.",
        "Options chosen for the {desc}. I will add it to the cart.",
        "Everything is selected for the {desc}, so I will add it to the cart.",
    ),
    **P,
)
VIEW_CART = Form(
    "shop.view_cart",
    (
        "Before paying, I will open the cart to check that the {desc} is there.",
        "Let me look at the cart once before checking out the {desc}; I will open the cart.",
        "I will open the cart and check the line for the {desc}.",
    ),
    **P,
)
REMOVE_WRONG = Form(
    "shop.remove_wrong",
    (
        "The cart holds {line}, which is not the {desc} I need; I will remove {item} from the "
        "cart.",
        "{line} in the cart does not match the {desc}. I will remove {item} from the cart.",
        "That line ({line}) is not the {desc}; I will remove {item} from the cart.",
    ),
    **P,
)
CHECKOUT = Form(
    "shop.checkout",
    (
        "The {desc} is in the cart; I will check out.",
        "The cart has the {desc} with the options asked for. I will check out.",
        "Done with the {desc}: it is in the cart, so I will check out.",
    ),
    **P,
)
NONE_FITS = Form(
    "shop.none_fits",
    (
        "No {noun} on the results is {article} {desc} under ${cap}; I will check out.",
        "I found no {desc} under ${cap}, so there is nothing to buy. I will check out.",
        "Every {noun} listed misses a constraint of the {desc} under ${cap}; I will check out "
        "with what there is.",
    ),
    **P,
)
PLAN = Form(
    "shop.plan",
    (
        "Plan: find {article} {desc} under ${cap}. Search for {noun}s, open those under ${cap} "
        "until one offers the options, select them, add it to the cart and check out.",
        "My plan for {article} {desc} under ${cap}: look up {noun}s, try the ones within the "
        "budget one by one, then configure the right one and buy it.",
        "To buy {article} {desc} under ${cap}, the steps are: search the shop, open each {noun} "
        "under ${cap} until one has the options, set them and check out.",
    ),
    **P,
)
NOTE = Form(
    "shop.note",
    (
        "This page shows {product} ({item}, {price}) with {options}; it is the {desc} under "
        "${cap} I need.",
        "Found it: {product} ({item}, {price}) comes with {options}, so it is {article} {desc} "
        "under ${cap}.",
        "Noting that {product} ({item}, {price}) has {options}: this is the {desc} under ${cap}.",
    ),
    **{**P, "product": r"[A-Z][\w ]*?"},
)
TOOL_FORMS = (
    PLAN,
    NOTE,
    SEARCH,
    COLOUR_SEARCH,
    RETRY,
    CLICK,
    NEXT_PAGE,
    SCAN,
    SCAN_BACK,
    BACK,
    BACK_CART,
    ADD,
    VIEW_CART,
    REMOVE_WRONG,
    CHECKOUT,
    NONE_FITS,
)
"""The ReAct agent's forms that state the target ({desc}, and {cap} where the step uses
it): its plan, its note and its tool steps."""
LISTED = re.compile(r"([A-Z][\w ]*?) \((P\d+), \$(\d+)\.(\d\d)\)")
OPTION_RE = re.compile(r"(colour|size) (\w+)")
LINE_OPTION_RE = re.compile(r"(colour|size)=(\w+)")
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
    target: tuple[str, str, int],
    opened: Collection[str],
    wording: int | None = None,
) -> Action | None:
    """Open the first listed item with the product word that fits the budget and was not
    opened yet, saying which items were listed, why this one and what it should be
    (`target`: product word, description, budget; None if none fits). Operators call it
    with a wrong belief (a misread budget, mixed-up prices) and the original's `wording`,
    so their clicks read exactly like the policy's."""
    noun, desc, cap = target
    matches = [r for r in listed if r.word == noun]
    fits = [r for r in matches if r.cents < cap * 100 and r.item_id not in opened]
    if not fits:
        return None
    fields = {
        "noun": noun,
        "listing": ", ".join(entry(r) for r in matches),
        "choice": entry(fits[0]),
        "cap": cap,
        "desc": desc,
    }
    text = CLICK.at(wording, **fields) if wording is not None else CLICK.say(history, **fields)
    return Action(actor, text, "click", {"target": fits[0].item_id})
