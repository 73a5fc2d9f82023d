"""The web shop policies' messages and actions: templates, builders and the parsers that
read them back."""

from __future__ import annotations

import re

Want = list[tuple[str, str]]

CLICK = (
    "The results list these {noun}s: {listing}. {choice} fits the ${cap} budget; I will open it."
)
CLICK_RE = re.compile(
    r"^The results list these (\w+)s: (.+)\. ([^.]+ \((P\d+), \$\d+\.\d\d\)) fits the "
    r"\$(\d+) budget; I will open it\.$"
)
LISTED = re.compile(r"([A-Z][\w ]*?) \((P\d+), \$(\d+)\.(\d\d)\)")
SELECT = "Options for the {noun}'s {name}: {values}. I will select {name} {value}."
SELECT_RE = re.compile(r"^Options for the (\w+)'s (\w+): (.+)\. I will select \2 (\w+)\.$")
ADD = "All options for the {noun} are set; I will add it to the cart."
CHECKOUT = "The {noun} is in the cart; I will check out."
APPROVE = "The cart holds one {desc}, as the instruction asks; I will check out."
REJECT_RE = re.compile(
    r"^To orchestrator: Check failed: the cart holds .+, but the instruction asks for one "
    r"(.+)\. Please fix the cart\.$"
)
FOUND_RE = re.compile(r"found item (P\d+) \((.+), \$[\d.]+\)")
BUY_RE = re.compile(r"item (P\d+) \((.+)\) is open; select (.+), then add it to the cart\.")
ADDED_RE = re.compile(r"^To orchestrator: added item (P\d+) ")
SEARCH_RE = re.compile(r"find an? (\w+) (\w+)(?: in size (\w+))? under \$(\d+) ")
OPTION_RE = re.compile(r"(colour|size) (\w+)")


def want_of(colour: str, size: str | None) -> Want:
    return [("colour", colour)] + ([("size", size)] if size else [])


def describe(colour: str, noun: str, size: str | None) -> str:
    return f"{colour} {noun}" + (f" in size {size}" if size else "")


def search_text(noun: str) -> str:
    """What the agent says before searching (for the product word, or the accessory's name:
    only words the shop's pages show)."""
    return f"I will search the shop for the {noun}."


def search_request(colour: str, noun: str, size: str | None, cap: int) -> str:
    """The orchestrator's request to the searcher (without the `To searcher:` prefix)."""
    article = "an" if colour[0] in "aeiou" else "a"
    desc = describe(colour, noun, size)
    return f"find {article} {desc} under ${cap} and leave its product page open."


def found_report(item_id: str, name: str, price: str) -> str:
    """The searcher's report to the orchestrator (without the prefix)."""
    return f"found item {item_id} ({name}, {price}); its product page is open."


def buy_request(item_id: str, name: str, want: Want) -> str:
    """The orchestrator's hand-off to the buyer (without the prefix)."""
    options = " and ".join(f"{k} {v}" for k, v in want)
    return f"item {item_id} ({name}) is open; select {options}, then add it to the cart."
