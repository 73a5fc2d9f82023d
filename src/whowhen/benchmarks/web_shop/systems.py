"""The web shop's scripted systems and their error operators, as the registry reads them:
the shoppers of `policies` with `operators`, and the ledger orchestrator with
`ledger_operators`."""

from __future__ import annotations

from whowhen.benchmarks.base import Operator
from whowhen.benchmarks.web_shop import ledger_operators, operators
from whowhen.benchmarks.web_shop.ledger import ShopLedgerSystem
from whowhen.benchmarks.web_shop.policies import SHOPPERS

POLICIES: dict[str, type] = {**SHOPPERS, "ledger": ShopLedgerSystem}
"""System name -> this benchmark's scripted reference policy."""

OPERATORS: dict[str, Operator | tuple[Operator, ...]] = {
    mode: (op, ledger_operators.OPERATORS[mode]) if mode in ledger_operators.OPERATORS else op
    for mode, op in operators.OPERATORS.items()
}
"""Taxonomy mode -> the shop's operator and, where it has one, the ledger's."""
