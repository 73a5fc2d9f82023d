"""The web shop environment: `search`, `click`, `select_option`, `add_to_cart` and
`checkout` on the simulated site, and its evaluator."""

from __future__ import annotations

from typing import Any

from whowhen.benchmarks.base import AnswerEnv, Tool
from whowhen.benchmarks.scoring import exact
from whowhen.benchmarks.web_shop.site import ShopSite
from whowhen.benchmarks.web_shop.tasks import BENCHMARK, CATEGORY, MODALITY
from whowhen.runtime import Action


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


class WebShopEnv(AnswerEnv):
    """The shop for one task; `checkout()` records the purchase summary as the answer."""

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
        return {
            "search": lambda a: site.search(str(a.get("query", ""))),
            "click": lambda a: site.click(str(a.get("target", ""))),
            "select_option": lambda a: site.select(str(a.get("name", "")), str(a.get("value", ""))),
            "add_to_cart": lambda a: site.add_to_cart(),
            "checkout": self._checkout,
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
