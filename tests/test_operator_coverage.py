"""Every taxonomy mode that applies to a built-in benchmark has an operator whose
replacements are valid for the environment and that changes the outcome on this seed."""

from __future__ import annotations

import pytest

from whowhen.registry import BENCHMARKS, SYSTEMS

from .operator_checks import check_mode

REQUIRED: dict[tuple[str, str], tuple[str, ...]] = {}
for _name, _spec in BENCHMARKS.items():
    for _mode, _systems in _spec.coverage.items():
        for _system in _systems:
            REQUIRED[(_name, _system)] = (*REQUIRED.get((_name, _system), ()), _mode)
"""(benchmark, system) -> the modes its operators must cover, as each benchmark package
marks them (`@covers(system, ...)` on its operators): every mode that is meaningful for the
pair's action types (coordination and verification modes need several agents; a false
approval or an ignored message needs a recovery in the run, which the slip model
provides)."""
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


def test_every_scripted_pair_declares_the_modes_it_covers() -> None:
    pairs = {(b, s) for s, benches in SYSTEMS.items() for b in benches}
    assert set(REQUIRED) == pairs
    assert all(REQUIRED.values())
