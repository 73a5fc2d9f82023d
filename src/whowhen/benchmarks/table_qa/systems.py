"""Table QA's scripted systems and their error operators, as the registry reads them: the
analysts of `policies` with `operators`, and the data-analysis group chat with
`expert_operators`."""

from __future__ import annotations

from whowhen.benchmarks.base import with_operators
from whowhen.benchmarks.table_qa import expert_operators, operators
from whowhen.benchmarks.table_qa.experts import ExpertChatSystem
from whowhen.benchmarks.table_qa.policies import POLICIES as ANALYSTS

POLICIES: dict[str, type] = {**ANALYSTS, "expert_chat": ExpertChatSystem}
"""System name -> this benchmark's scripted reference policy."""

OPERATORS = with_operators(operators.OPERATORS, expert_operators.OPERATORS)
"""Taxonomy mode -> the package's operators, the group chat's among them."""
