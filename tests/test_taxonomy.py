from __future__ import annotations

import copy

import polars as pl
import pytest
import yaml

from whowhen.errors import WhowhenError
from whowhen.taxonomy import failure_overview, load_taxonomy, parse_taxonomy

from .conftest import ROOT

DOC = yaml.safe_load((ROOT / "config" / "taxonomy.yaml").read_text())


def test_shipped_taxonomy_loads() -> None:
    tax = load_taxonomy(ROOT / "config" / "taxonomy.yaml")
    assert set(tax.categories) == {
        "perception",
        "reasoning",
        "planning",
        "action",
        "verification",
        "coordination",
    }
    assert len(tax.modes) >= 12
    for category in tax.categories:
        assert any(m.category == category for m in tax.modes), category
    assert "action.wrong_tool_argument" in [m.id for m in tax.modes_for("final_answer")]
    assert "coordination.distorted_handoff" in [m.id for m in tax.modes_for("message")]
    assert parse_taxonomy(tax.to_dict()) == tax


STABLE_IDS = {  # released mode ids: never renamed or reused (add new ones, never remove)
    "perception.misread_value",
    "perception.misidentified_object",
    "reasoning.wrong_operand",
    "reasoning.wrong_operator",
    "reasoning.miscount",
    "reasoning.logic_bug",
    "planning.wrong_subgoal",
    "planning.premature_finish",
    "action.wrong_tool_argument",
    "action.wrong_tool",
    "verification.false_approval",
    "coordination.ignored_message",
    "coordination.distorted_handoff",
}


def test_released_mode_ids_stay_stable() -> None:
    tax = load_taxonomy(ROOT / "config" / "taxonomy.yaml")
    assert {m.id for m in tax.modes} >= STABLE_IDS
    for mode in tax.modes:  # an id names its category, so a mode never changes category
        assert mode.id.split(".")[0] == mode.category
        assert mode.definition and mode.example and mode.action_types


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d["modes"][0].update(category="astrology"), "modes.0.category"),
        (lambda d: d["modes"][1].update(id=d["modes"][0]["id"]), "modes.1.id"),
        (lambda d: d["modes"][2].pop("action_types"), "modes.2"),
        (lambda d: d["modes"][0].update(id="Bad Id"), "modes.0.id"),
    ],
)
def test_invalid_taxonomy_names_field(mutate, field) -> None:
    doc = copy.deepcopy(DOC)
    mutate(doc)
    with pytest.raises(WhowhenError, match=f"field '{field}'"):
        parse_taxonomy(doc, "tax.yaml")


def test_unknown_mode() -> None:
    with pytest.raises(WhowhenError, match="unknown failure mode"):
        parse_taxonomy(DOC).mode("reasoning.nope")


def test_overview_counts_failures_and_slips() -> None:
    runs = pl.DataFrame(
        {
            "run_id": ["r1", "r2", "r3", "r4"],
            "benchmark": ["b"] * 4,
            "system": ["s", "s", "s", "t"],
            "modality": ["text"] * 4,
            "category": ["stem"] * 4,
            "success": [True, False, False, True],
        }
    )
    slips = pl.DataFrame({"run_id": ["r1", "r2", "r2"], "step": [1, 1, 3]})
    ov = failure_overview(runs, slips).select(
        "system", "n_runs", "n_failed", "failure_rate", "n_slips", "n_slipped_runs", "n_recovered"
    )
    assert ov.rows() == [("s", 3, 2, 2 / 3, 3, 2, 1), ("t", 1, 0, 0.0, 0, 0, 0)]
