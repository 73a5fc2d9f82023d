"""Scripted reference policies for HumanEval: a code-as-action agent and a coder -> tester ->
reviewer pipeline, deciding only from the visible history.

The coders stand in for a competent programmer: they know the canonical solution of a
visible prompt (`reference_solution`, a lookup from the prompt text shown at step 0), and,
on some tasks (a per-task draw), start from one to five buggy drafts that the docstring
examples catch (`draft_flaws`), so a successful run can hold failing runs, a look at the
failing call and a fix. Around that the agents work as programmers do: plan, list the
examples, run them, try inputs of their own (empty, one-item, reordered), re-run before
finishing; the tester reports to the reviewer, who may ask for a re-run or question the
coder before approving. A logic bug that the examples catch is fixed (a recovery); one
they miss reaches the hidden tests and fails the task.
"""

from __future__ import annotations

from whowhen.benchmarks.humaneval.code_act import CodeActSystem
from whowhen.benchmarks.humaneval.pipeline import PipelineSystem

POLICIES: dict[str, type] = {"code_act": CodeActSystem, "pipeline": PipelineSystem}
"""System name -> this benchmark's scripted reference policy."""
