"""What the web shop's scripted agents read off the visible history: the instruction, the
current page (results, product, cart), the cart, and which options were selected.

Only observation text is parsed, never the environment's state, so an injected wrong click
or option shows up here exactly as the shop rendered it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from whowhen.runtime import Step

RESULT = re.compile(r"^\[(P\d+)\] (.+) \| \$(\d+)\.(\d\d)$", re.M)
PRODUCT = re.compile(r"^Product \[(P\d+)\] (.+)\nCategory: .*\nPrice: \$(\d+)\.(\d\d)\n", re.M)
OPTIONS = re.compile(r"^Options: (.+)$", re.M)
OPTION = re.compile(r"(\w+) \(([^)]*)\)")
CART_LINE = re.compile(r"^(P\d+) (.+?) \((.*)\) \| \$(\d+)\.(\d\d)$", re.M)
SELECTED = re.compile(r"^Selected (\w+): ")


@dataclass(frozen=True)
class Item:
    """An item as a page shows it: id, name, price, and (product pages only) its options."""

    item_id: str
    name: str
    cents: int
    options: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def word(self) -> str:
        return self.name.split()[-1].lower()

    @property
    def price(self) -> str:
        return f"${self.cents // 100}.{self.cents % 100:02d}"

    def offers(self, want: Sequence[tuple[str, str]]) -> bool:
        options = dict(self.options)
        return all(value in options.get(name, ()) for name, value in want)


@dataclass(frozen=True)
class Page:
    kind: str  # results | product | cart | home
    text: str
    index: int  # the history index of the observation that showed it


def page_kind(text: str) -> str | None:
    for prefix, kind in (
        ("Search results for", "results"),
        ("No results for", "results"),
        ("Product [", "product"),
        ("Cart ", "cart"),
        ("Home page", "home"),
    ):
        if text.startswith(prefix):
            return kind
    return None


def current_page(history: Sequence[Step], since: int = 0) -> Page | None:
    """The page on screen: the last search/click observation that rendered one."""
    for i in range(len(history) - 1, since - 1, -1):
        step = history[i]
        if step.kind == "observation" and step.actor in ("search", "click"):
            kind = page_kind(step.content)
            if kind is not None:
                return Page(kind, step.content, i)
    return None


def results(text: str) -> list[Item]:
    return [Item(i, name, int(d) * 100 + int(c)) for i, name, d, c in RESULT.findall(text)]


def listed(history: Sequence[Step]) -> list[Item]:
    """The items of the last results page shown (empty if none was)."""
    for step in reversed(history):
        if step.kind == "observation" and page_kind(step.content) == "results":
            return results(step.content)
    return []


def listed_ids(history: Sequence[Step]) -> list[str]:
    """The item ids of the last results page shown (empty if none was)."""
    return [r.item_id for r in listed(history)]


def product(text: str) -> Item | None:
    m = PRODUCT.search(text)
    opts = OPTIONS.search(text)
    if not m or not opts:
        return None
    options = tuple(
        (name, tuple(v.strip() for v in values.split(",")))
        for name, values in OPTION.findall(opts.group(1))
    )
    return Item(m.group(1), m.group(2), int(m.group(3)) * 100 + int(m.group(4)), options)


def cart(history: Sequence[Step]) -> list[tuple[Item, dict[str, str]]]:
    """The cart as last shown (by add_to_cart or the cart page); empty if never shown."""
    for step in reversed(history):
        if step.kind == "observation" and "Cart (" in step.content:
            body = step.content[step.content.index("Cart (") :]
            return [
                (
                    Item(i, name, int(d) * 100 + int(c)),
                    dict(kv.split("=", 1) for kv in opts.split(", ") if "=" in kv),
                )
                for i, name, opts, d, c in CART_LINE.findall(body)
            ]
    return []


def observations(history: Sequence[Step], tool: str, since: int) -> list[Step]:
    return [s for s in history[since + 1 :] if s.kind == "observation" and s.actor == tool]


def opened_since_search(history: Sequence[Step]) -> set[str]:
    """The items whose product pages were opened since the last search (a policy does not
    open one twice)."""
    searches = [i for i, s in enumerate(history) if s.actor == "search"]
    if not searches:
        return set()
    return {
        it.item_id
        for s in observations(history, "click", searches[-1])
        if (it := product(s.content)) is not None
    }


def selected_names(history: Sequence[Step], since: int) -> set[str]:
    """Options whose selection succeeded after index `since` (names only: a wrong value
    that the shop accepted counts as done, as it would for a hurried agent)."""
    found = set()
    for step in observations(history, "select_option", since):
        m = SELECTED.match(step.content)
        if m:
            found.add(m.group(1))
    return found


def added(history: Sequence[Step], since: int) -> list[Step]:
    return [
        s
        for s in observations(history, "add_to_cart", since)
        if s.content.startswith("Added to cart")
    ]


def last_message_to(history: Sequence[Step], agent: str) -> int:
    """Index of the last message addressed to `agent` (0 if none)."""
    prefix = f"To {agent}:"
    return max(
        (i for i, s in enumerate(history) if s.kind == "message" and s.content.startswith(prefix)),
        default=0,
    )
