"""Shared Hypothesis settings and strategies for the property-based bad-input tests.

Runs are reproducible (`derandomize`: the same examples every run), write no example
database, and keep Hypothesis' own caches (unicode tables) out of the checkout.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "whowhen-hypothesis")


def fuzz_settings(max_examples: int) -> settings:
    """Reproducible, database-free settings; the function-scoped autouse media fixture is
    safe to share between examples."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.text(max_size=12),
)
"""JSON scalars as Python's json module reads them (NaN and infinities included)."""

json_values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)


def is_json_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):
        return False


garbage_lines = st.one_of(
    st.binary(max_size=40),
    st.text(max_size=40).map(str.encode),
    json_values.filter(lambda v: not isinstance(v, dict)).map(lambda v: json.dumps(v).encode()),
).filter(lambda b: b"\n" not in b and not is_json_object(b))
"""One JSONL line that is never a JSON object: bytes, text, or a JSON array or scalar."""


def truncated(text: str, cut: int) -> str:
    """`text` cut short (at least one character removed)."""
    return text[: max(0, min(cut, len(text) - 1))]
