"""The web shop's scripted systems and their error operators, as the registry reads them:
the shoppers of `policies` with `operators`, the ledger orchestrator with
`ledger_operators`, and the web-lookup group chat with `expert_operators`."""

from __future__ import annotations

from whowhen.benchmarks.base import with_operators
from whowhen.benchmarks.web_shop import expert_operators, ledger_operators, operators
from whowhen.benchmarks.web_shop.experts import ExpertChatSystem
from whowhen.benchmarks.web_shop.ledger import ShopLedgerSystem
from whowhen.benchmarks.web_shop.policies import SHOPPERS

POLICIES: dict[str, type] = {
    **SHOPPERS,
    "ledger": ShopLedgerSystem,
    "expert_chat": ExpertChatSystem,
}
"""System name -> this benchmark's scripted reference policy."""

OPERATORS = with_operators(
    with_operators(operators.OPERATORS, ledger_operators.OPERATORS), expert_operators.OPERATORS
)
"""Taxonomy mode -> the package's operators, the ledger's and the group chat's among them."""
