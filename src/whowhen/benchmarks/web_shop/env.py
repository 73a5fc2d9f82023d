"""The web shop environment: `search`, `click`, `select_option`, `add_to_cart` and
`checkout` on the simulated site, and its evaluator; for a group chat's programs, the
site's catalogue as a read-only JSON file."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from whowhen.benchmarks.base import AnswerEnv, Tool
from whowhen.benchmarks.scoring import exact
from whowhen.benchmarks.web_shop.site import Product, ShopSite, money
from whowhen.benchmarks.web_shop.tasks import BENCHMARK, CATEGORY, MODALITY
from whowhen.runtime import Action
from whowhen.tools import TERMINAL, computer_terminal


def _tool(name: str, description: str, params: dict[str, str] | None = None) -> dict[str, Any]:
    params = params or {}
    return {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "required": list(params),
            "additionalProperties": False,
            "properties": {p: {"type": "string", "description": d} for p, d in params.items()},
        },
    }


TOOL_SPECS = (
    _tool(
        "search",
        "Search the shop; shows a results page of item ids, names and prices.",
        {"query": "words to look for"},
    ),
    _tool(
        "click",
        "Click an item id on the current results page, or a button shown on the "
        "page (back, cart, remove <item id>).",
        {"target": "an item id or a button"},
    ),
    _tool(
        "select_option",
        "On a product page, choose a value for one of its options.",
        {"name": "the option, e.g. colour", "value": "one of the listed values"},
    ),
    _tool("add_to_cart", "Add the open product with the selected options to the cart."),
    _tool("checkout", "Place the order with the cart as it is; this ends the task."),
)


DATA_FILE = "catalogue.json"
"""The catalogue as a group chat's programs read it (`tools.DATA_DIR`/catalogue.json)."""


@lru_cache(maxsize=64)
def catalogue_json(catalogue: tuple[Product, ...]) -> str:
    """Every product as its pages show it (id, name, category, price, options), in the
    shop's order: what the site's search and product pages hold, as data. Memoized:
    every step of an episode asks for the tools again."""
    return json.dumps(
        [
            {
                "id": p.item_id,
                "name": p.name,
                "category": p.category,
                "price": money(p.cents),
                "options": {name: list(values) for name, values in p.options},
            }
            for p in catalogue
        ],
        indent=1,
    )


class WebShopEnv(AnswerEnv):
    """The shop for one task; `checkout()` records the purchase summary as the answer.
    A group chat's programs find the catalogue under `tools.DATA_DIR`; only the shop's
    tools change what is in the cart."""

    benchmark, modality, category = BENCHMARK, MODALITY, CATEGORY

    def reset(self) -> str:
        self._start()
        self.site = ShopSite(self.task.catalogue)
        return (
            "You are shopping on a web store. Tools: search(query), click(target), "
            "select_option(name, value), add_to_cart(), checkout(). checkout() places the "
            f"order with the cart as it is and ends the task.\n\nInstruction: {self.task.question}"
        )

    def tools(self) -> dict[str, Tool]:
        site = self.site
        catalogue = self.task.catalogue
        return {
            "search": lambda a: site.search(str(a.get("query", ""))),
            "click": lambda a: site.click(str(a.get("target", ""))),
            "select_option": lambda a: site.select(str(a.get("name", "")), str(a.get("value", ""))),
            "add_to_cart": lambda a: site.add_to_cart(),
            "checkout": self._checkout,
            TERMINAL: lambda a: computer_terminal(a, {DATA_FILE: catalogue_json(catalogue)}),
        }

    def _checkout(self, args: dict) -> str:
        self._answer, self._done = self.site.purchase_summary(), True
        return self.site.checkout_page()

    def step(self, action: Action) -> tuple[str, str] | tuple[str, str, tuple[str, ...]] | None:
        if action.tool == "final_answer":  # this task ends with checkout(), not an answer
            return "final_answer", "Error: there is no final_answer here; finish with checkout()."
        return super().step(action)

    @staticmethod
    def score(answer: str | None, gold: str) -> bool:
        return exact(answer, gold)


Env = WebShopEnv
