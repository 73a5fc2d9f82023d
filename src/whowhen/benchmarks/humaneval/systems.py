"""HumanEval's scripted systems and their error operators, as the registry reads them: the
code-as-action agent and the pipeline of `policies` with `operators`, and the expert group
chat with `expert_operators`."""

from __future__ import annotations

from whowhen.benchmarks.base import with_operators
from whowhen.benchmarks.humaneval import expert_operators, operators
from whowhen.benchmarks.humaneval.experts import ExpertChatSystem
from whowhen.benchmarks.humaneval.policies import POLICIES as CODERS

POLICIES: dict[str, type] = {**CODERS, "expert_chat": ExpertChatSystem}
"""System name -> this benchmark's scripted reference policy."""

OPERATORS = with_operators(operators.OPERATORS, expert_operators.OPERATORS)
"""Taxonomy mode -> the package's operators, the group chat's among them."""
