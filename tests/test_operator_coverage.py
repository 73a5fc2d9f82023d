"""Every taxonomy mode that applies to a built-in benchmark has an operator whose
replacements are valid for the environment and that changes the outcome on this seed."""

from __future__ import annotations

import pytest

from .operator_checks import check_mode

# (benchmark, system) -> the modes its operators must cover: every mode that is meaningful
# for the pair's action types (coordination and verification modes need several agents;
# a false approval or an ignored message needs a recovery in the run, which the slip model
# provides).
REQUIRED: dict[tuple[str, str], tuple[str, ...]] = {
    ("arithmetic", "react"): (
        "reasoning.wrong_operand",
        "reasoning.wrong_operator",
        "action.wrong_tool_argument",
        "planning.premature_finish",
        "planning.wrong_subgoal",
    ),
    ("arithmetic", "code_act"): (
        "reasoning.wrong_operand",
        "reasoning.wrong_operator",
        "action.wrong_tool_argument",
        "planning.premature_finish",
    ),
    ("arithmetic", "solver_verifier"): (
        "reasoning.wrong_operand",
        "action.wrong_tool_argument",
        "coordination.distorted_handoff",
        "verification.false_approval",
        "coordination.ignored_message",
    ),
    ("humaneval", "code_act"): ("reasoning.logic_bug", "planning.premature_finish"),
    ("humaneval", "pipeline"): (
        "reasoning.logic_bug",
        "action.wrong_tool_argument",
        "verification.false_approval",
    ),
    ("table_qa", "react"): (
        "reasoning.wrong_operand",
        "reasoning.wrong_operator",
        "action.wrong_tool_argument",
        "planning.wrong_subgoal",
        "perception.misread_value",
    ),
    ("table_qa", "solver_verifier"): (
        "reasoning.wrong_operand",
        "action.wrong_tool_argument",
        "coordination.distorted_handoff",
        "verification.false_approval",
    ),
    ("doc_qa", "react"): (
        "action.wrong_tool_argument",
        "planning.wrong_subgoal",
        "planning.premature_finish",
        "perception.misidentified_object",
    ),
    ("doc_qa", "orchestrator"): (
        "coordination.distorted_handoff",
        "planning.wrong_subgoal",
        "planning.premature_finish",
        "perception.misidentified_object",
    ),
    ("web_shop", "react"): (
        "action.wrong_tool_argument",
        "action.wrong_tool",
        "planning.premature_finish",
        "planning.wrong_subgoal",
        "perception.misidentified_object",
    ),
    ("web_shop", "orchestrator"): (
        "action.wrong_tool_argument",
        "action.wrong_tool",
        "perception.misidentified_object",
        "coordination.distorted_handoff",
        "verification.false_approval",
    ),
    ("chart_qa", "react"): (
        "perception.misread_value",
        "perception.misidentified_object",
        "reasoning.wrong_operator",
        "planning.premature_finish",
        "action.wrong_tool_argument",
    ),
    ("chart_qa", "orchestrator"): (
        "perception.misread_value",
        "coordination.distorted_handoff",
        "reasoning.wrong_operator",
        "verification.false_approval",
    ),
    ("visual_count", "react"): (
        "reasoning.miscount",
        "perception.misidentified_object",
        "action.wrong_tool_argument",
    ),
    ("event_timing", "react"): (
        "perception.misidentified_object",
        "action.wrong_tool_argument",
        "planning.wrong_subgoal",
        "planning.premature_finish",
        "reasoning.miscount",
    ),
    ("event_timing", "orchestrator"): (
        "perception.misidentified_object",
        "coordination.distorted_handoff",
        "planning.wrong_subgoal",
        "verification.false_approval",
    ),
}
CASES = [(b, s, m) for (b, s), modes in REQUIRED.items() for m in modes]


@pytest.mark.parametrize(("benchmark", "system", "mode"), CASES)
def test_mode_has_a_valid_operator_that_changes_the_outcome(
    benchmark: str, system: str, mode: str
) -> None:
    result = check_mode(benchmark, system, mode)
    assert result["injections"] > 0, f"no {mode} operator applies to {benchmark}/{system}"
    assert not result["invalid"], result["invalid"][:2]
    assert result["flipped"] > 0, f"{mode} never changes the outcome on {benchmark}/{system}"


def test_every_mode_is_covered_somewhere() -> None:
    from .operator_checks import TAXONOMY

    covered = {m for modes in REQUIRED.values() for m in modes}
    assert covered == {m.id for m in TAXONOMY.modes}
