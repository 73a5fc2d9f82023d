"""The web shop's scripted systems and their error operators, as the registry reads them:
the shoppers of `policies` with `operators`, and the ledger orchestrator with
`ledger_operators`."""

from __future__ import annotations

from whowhen.benchmarks.base import with_operators
from whowhen.benchmarks.web_shop import ledger_operators, operators
from whowhen.benchmarks.web_shop.ledger import ShopLedgerSystem
from whowhen.benchmarks.web_shop.policies import SHOPPERS

POLICIES: dict[str, type] = {**SHOPPERS, "ledger": ShopLedgerSystem}
"""System name -> this benchmark's scripted reference policy."""

OPERATORS = with_operators(operators.OPERATORS, ledger_operators.OPERATORS)
"""Taxonomy mode -> the package's operators, the ledger's among them."""
