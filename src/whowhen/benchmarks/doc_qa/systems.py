"""Document QA's scripted systems and their error operators, as the registry reads them:
the readers of `policies` with `operators`, and the ledger orchestrator with
`ledger_operators`."""

from __future__ import annotations

from whowhen.benchmarks.base import with_operators
from whowhen.benchmarks.doc_qa import ledger_operators, operators
from whowhen.benchmarks.doc_qa.ledger import DocLedgerSystem
from whowhen.benchmarks.doc_qa.policies import READERS

POLICIES: dict[str, type] = {**READERS, "ledger": DocLedgerSystem}
"""System name -> this benchmark's scripted reference policy."""

OPERATORS = with_operators(operators.OPERATORS, ledger_operators.OPERATORS)
"""Taxonomy mode -> the package's operators, the ledger's among them."""
