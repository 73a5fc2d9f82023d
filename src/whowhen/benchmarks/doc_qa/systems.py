"""Document QA's scripted systems and their error operators, as the registry reads them:
the readers of `policies` with `operators`, and the ledger orchestrator with
`ledger_operators`."""

from __future__ import annotations

from whowhen.benchmarks.base import Operator
from whowhen.benchmarks.doc_qa import ledger_operators, operators
from whowhen.benchmarks.doc_qa.ledger import DocLedgerSystem
from whowhen.benchmarks.doc_qa.policies import READERS

POLICIES: dict[str, type] = {**READERS, "ledger": DocLedgerSystem}
"""System name -> this benchmark's scripted reference policy."""

OPERATORS: dict[str, Operator | tuple[Operator, ...]] = {
    mode: (op, ledger_operators.OPERATORS[mode]) if mode in ledger_operators.OPERATORS else op
    for mode, op in operators.OPERATORS.items()
}
"""Taxonomy mode -> the readers' operator and, where it has one, the ledger's."""
