"""The web shop's site: pages (home, search results, product, cart) rendered as text, a
back-button page stack, the current product's option selection and the cart.

Kept apart from the task generator so that each stays small; all state lives in one
`ShopSite` per episode, so the same actions always give the same pages (warm start)."""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_RESULTS = 30
PAGE_SIZE = 4
"""Results per page: a search with more hits shows a [next] button (a look at
an extra page)."""


@dataclass(frozen=True)
class Product:
    item_id: str
    name: str
    category: str
    cents: int
    options: tuple[tuple[str, tuple[str, ...]], ...]  # (option name, values), all required

    @property
    def word(self) -> str:
        """The product word: what the item is (the last word of its name)."""
        return self.name.split()[-1].lower()


def money(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


def line_summary(item_id: str, options: tuple[tuple[str, str], ...]) -> str:
    """One cart line as the recorded purchase and the gold write it."""
    return f"{item_id} ({', '.join(f'{k}={v}' for k, v in options)})"


Line = tuple[Product, tuple[tuple[str, str], ...]]
Page = tuple[str, ...]  # ("home",) | ("results", query, page, *ids) | ("product", id) | ("cart",)


def _cart_line(line: Line) -> str:
    product, chosen = line
    opts = ", ".join(f"{k}={v}" for k, v in chosen)
    return f"{product.item_id} {product.name} ({opts}) | {money(product.cents)}"


def _page_ids(page: Page) -> tuple[str, ...]:
    """The item ids a results page shows (its page of the hits)."""
    start = (int(page[2]) - 1) * PAGE_SIZE
    return page[3:][start : start + PAGE_SIZE]


class ShopSite:
    """One episode's browser state over a task's catalogue."""

    def __init__(self, catalogue: tuple[Product, ...]) -> None:
        self.products = {p.item_id: p for p in catalogue}
        self.order = [p.item_id for p in catalogue]
        self.stack: list[Page] = [("home",)]
        self.selected: dict[str, str] = {}
        self.cart: list[Line] = []

    # pages ---------------------------------------------------------------------------
    def render(self) -> str:
        page = self.stack[-1]
        if page[0] == "results":
            query, number, ids = page[1], int(page[2]), page[3:]
            if not ids:
                return f'No results for "{query}".\nButtons: [back] [cart]'
            pages = -(-len(ids) // PAGE_SIZE)
            shown = _page_ids(page)
            rows = [
                f"[{i}] {self.products[i].name} | {money(self.products[i].cents)}" for i in shown
            ]
            head = f'Search results for "{query}" ({len(ids)} items, page {number} of {pages}):'
            more = " [next]" if number < pages else ""
            return "\n".join([head, *rows, f"Buttons:{more} [back] [cart]"])
        if page[0] == "product":
            p = self.products[page[1]]
            options = "; ".join(f"{name} ({', '.join(values)})" for name, values in p.options)
            chosen = ", ".join(f"{k}={v}" for k, v in self.selected.items()) or "none"
            return (
                f"Product [{p.item_id}] {p.name}\nCategory: {p.category}\n"
                f"Price: {money(p.cents)}\nOptions: {options}\nSelected: {chosen}\n"
                "Buttons: [back] [cart]"
            )
        if page[0] == "cart":
            removes = "".join(f" [remove {line[0].item_id}]" for line in self.cart)
            return f"{self.cart_text()}\nButtons: [back]{removes}"
        return "Home page of the shop. Find products with search(query).\nButtons: [cart]"

    def cart_text(self) -> str:
        if not self.cart:
            return "Cart (empty)."
        total = money(sum(p.cents for p, _ in self.cart))
        n = len(self.cart)
        head = f"Cart ({n} item{'s' if n != 1 else ''}, total {total}):"
        return "\n".join([head, *(_cart_line(line) for line in self.cart)])

    # tools ---------------------------------------------------------------------------
    def search(self, query: str) -> str:
        tokens = re.findall(r"\w+", query.lower())
        if not tokens:
            return "Error: the search query is empty."

        def hit(p: Product) -> bool:
            words = {*p.name.lower().split(), p.category}
            return all(t in words or (t.endswith("s") and t[:-1] in words) for t in tokens)

        ids = [i for i in self.order if hit(self.products[i])][:MAX_RESULTS]
        self.stack.append(("results", query.strip(), "1", *ids))
        return self.render()

    def click(self, target: str) -> str:
        target = target.strip().strip("[]").strip()
        page = self.stack[-1]
        if target.lower() == "back":
            if len(self.stack) == 1:
                return "Error: there is no previous page."
            self.stack.pop()
            return self.render()
        if target.lower() == "next":
            if page[0] != "results" or int(page[2]) * PAGE_SIZE >= len(page[3:]):
                return "Error: there is no next page here."
            self.stack.append((*page[:2], str(int(page[2]) + 1), *page[3:]))
            return self.render()
        if target.lower() == "cart":
            if page[0] != "cart":
                self.stack.append(("cart",))
            return self.render()
        removing = re.fullmatch(r"remove (\w+)", target, re.I)
        if removing and page[0] == "cart":
            item = removing.group(1).upper()
            for i, line in enumerate(self.cart):
                if line[0].item_id == item:
                    del self.cart[i]
                    return self.render()
            return f"Error: {item} is not in the cart."
        item = target.upper()
        if page[0] == "results" and item in _page_ids(page):
            self.stack.append(("product", item))
            self.selected = {}
            return self.render()
        return f"Error: no item or button {target!r} on this page."

    def select(self, name: str, value: str) -> str:
        page = self.stack[-1]
        if page[0] != "product":
            return "Error: select_option works on a product page; open a product first."
        options = dict(self.products[page[1]].options)
        name = "colour" if name.strip().lower() == "color" else name.strip().lower()
        if name not in options:
            return f"Error: this product has no option {name!r}; options: {', '.join(options)}."
        match = [v for v in options[name] if v.lower() == value.strip().lower()]
        if not match:
            return (
                f"Error: {value.strip()!r} is not available for {name}; "
                f"choose from: {', '.join(options[name])}."
            )
        self.selected[name] = match[0]
        self.selected = {k: self.selected[k] for k in options if k in self.selected}
        missing = [k for k in options if k not in self.selected]
        chosen = ", ".join(f"{k}={v}" for k, v in self.selected.items())
        still = f"; still to select: {', '.join(missing)}" if missing else ""
        return f"Selected {name}: {match[0]}. Current selection: {chosen}{still}."

    def add_to_cart(self) -> str:
        page = self.stack[-1]
        if page[0] != "product":
            return "Error: add_to_cart works on a product page; open a product first."
        product = self.products[page[1]]
        missing = [name for name, _ in product.options if name not in self.selected]
        if missing:
            return f"Error: select a {missing[0]} first (not selected: {', '.join(missing)})."
        line = (product, tuple((name, self.selected[name]) for name, _ in product.options))
        self.cart.append(line)
        return f"Added to cart: {_cart_line(line)}\n{self.cart_text()}"

    def purchase_summary(self) -> str:
        """The cart as the recorded final answer (compared with the task's gold)."""
        if not self.cart:
            return "(empty cart)"
        return "; ".join(line_summary(p.item_id, chosen) for p, chosen in self.cart)

    def checkout_page(self) -> str:
        if not self.cart:
            return "Order placed with an empty cart; nothing was bought."
        return "Order placed. " + self.cart_text().replace("Cart ", "Order ", 1)
