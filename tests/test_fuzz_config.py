"""Property-based tests of the config validator: the default config under random mutations
(a key deleted, a value of another type, an unknown key, garbage nested in) is valid or
fails with a one-line WhowhenError naming the file and the field path; arbitrary YAML text
fails naming the file. Never a KeyError or TypeError traceback."""

from __future__ import annotations

import copy
import re
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from whowhen.config import check_files, load_config, validate_config
from whowhen.errors import WhowhenError

from .conftest import ROOT
from .fuzz_strategies import fuzz_settings, json_values, truncated

DEFAULT: dict[str, Any] = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())

yaml_values = st.one_of(
    json_values,
    st.dates(),
    st.binary(max_size=4),
    st.sampled_from([float("nan"), float("inf"), 2**80, 3.0, "", "standin", "llm_react"]),
)
"""Values a YAML file can hold (dates and bytes too), and a few near-valid ones."""
yaml_keys = st.one_of(st.text(max_size=8), st.integers(), st.booleans(), st.none())
"""Mapping keys as YAML reads them: not only strings."""

Path_ = tuple[str | int, ...]


def _children(node: Any) -> list[str | int]:
    if isinstance(node, dict):
        return list(node)
    if isinstance(node, list):
        return list(range(len(node)))
    return []


@st.composite
def mutated_configs(draw: st.DrawFn) -> tuple[dict[str, Any], Path_]:
    """The default config with one mutation at a random path; returns (config, path)."""
    config = copy.deepcopy(DEFAULT)
    path: list[str | int] = [draw(st.sampled_from(_children(config)))]
    parent: Any = config
    while _children(parent[path[-1]]) and draw(st.booleans()):
        parent = parent[path[-1]]
        path.append(draw(st.sampled_from(_children(parent))))
    key, target = path[-1], parent[path[-1]]
    op = draw(st.sampled_from(["delete", "replace", "add", "nest"]))
    if op == "delete":
        del parent[key]
    elif op == "replace":
        parent[key] = draw(yaml_values)
    elif op == "add" and isinstance(target, dict):
        target[draw(yaml_keys.filter(lambda k: k not in target))] = draw(yaml_values)
    elif op == "add" and isinstance(target, list):
        target.insert(draw(st.integers(0, len(target))), draw(yaml_values))
    else:
        parent[key] = draw(
            st.sampled_from([{"garbage": target}, [target], [[{"x": target}]]])
            | st.dictionaries(yaml_keys, yaml_values, min_size=1, max_size=2).map(
                lambda d: {**d, "x": {"y": target}}
            )
        )
    return config, tuple(path)


CROSS_FIELD = {
    "systems": r"agents\.model",
    "agents": r"agents\.model",
    "benchmarks": r"benchmarks\.arithmetic\.min_ops",
    "attribution": r"attribution\.llm\.\d+\.name",
    "imports": r"imports\.\d+\.name",
}
"""Checks across fields: a mutation here may be reported at the other field."""


def _related(field: str, path: Path_) -> bool:
    """The field named is on the mutated path (above or below it), or a cross-field check."""
    if field == "(top level)":
        return len(path) == 1
    parts, want = field.split("."), [str(p) for p in path]
    if parts[: len(want)] == want[: len(parts)]:
        return True
    return bool(re.fullmatch(CROSS_FIELD.get(want[0], "$^"), field))


def _long_file(config: dict[str, Any], key: str) -> tuple[dict[str, Any], Path_]:
    config = copy.deepcopy(config)
    config["taxonomy"][key] = "x" * 300 + ".yaml"
    return config, ("taxonomy", key)


@fuzz_settings(200)
@given(mutated_configs())
@example(({**copy.deepcopy(DEFAULT), 1: "x"}, (1,)))
@example(({**copy.deepcopy(DEFAULT), None: 1, 2: 3}, (None,)))
@example(({**copy.deepcopy(DEFAULT), True: {}}, (True,)))
@example(_long_file(DEFAULT, "file"))
def test_mutated_config_is_valid_or_names_the_field(case: tuple[dict[str, Any], Path_]) -> None:
    config, path = case
    try:
        checked = validate_config(config, source="mut.yaml")
        check_files(checked, "mut.yaml", ROOT)
    except WhowhenError as exc:
        message = str(exc)
        assert message.startswith("mut.yaml: ") and "\n" not in message
        assert exc.field and f"field '{exc.field}'" in message
        assert _related(exc.field, path), (exc.field, path)
    else:
        assert isinstance(checked, dict) and "attribution" in checked


def _corrupt(text: str, at: int, cut: int, insert: str) -> str:
    at = min(at, len(text))
    return text[:at] + insert + text[at + cut :]


@st.composite
def yaml_texts(draw: st.DrawFn) -> bytes:
    """Near-config YAML: the dumped (mutated) config corrupted, cut short or re-encoded."""
    config, _ = draw(mutated_configs())
    try:
        text = yaml.safe_dump(config, allow_unicode=draw(st.booleans()))
    except yaml.YAMLError:
        text = yaml.safe_dump(DEFAULT)
    form = draw(st.sampled_from(["as_is", "corrupt", "truncated", "latin1"]))
    if form == "corrupt":
        insert = draw(
            st.text(max_size=6) | st.sampled_from([":", "- ", "  ", "[", "{", "&a", "*a"])
        )
        text = _corrupt(text, draw(st.integers(0, len(text))), draw(st.integers(0, 5)), insert)
    if form == "truncated":
        text = truncated(text, draw(st.integers(0, len(text))))
    if form == "latin1":
        return (text + "# café\n").encode("latin-1", "replace")
    return text.encode()


@fuzz_settings(150)
@given(st.one_of(st.text().map(str.encode), st.binary(), yaml_texts()))
@example(b"\xff\xfe\x00")
@example(b"seed: 2001-13-01\n")
@example(b"seed: " + b"1" * 5000 + b"\n")
@example(b"seed: !!int 'z'\n")
@example(b"seed: !!float 'x'\n")
@example(b"seed: !!timestamp 'x'\n")
@example(b"[" * 5000)
def test_any_config_file_loads_or_names_the_file(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.yaml"
        path.write_bytes(content)
        try:
            config = load_config(path, root=ROOT)
        except WhowhenError as exc:
            message = str(exc)
            assert message.startswith(f"{path}: ") and "\n" not in message
        else:
            assert isinstance(config, dict) and config["benchmarks"]


def test_related_fields() -> None:
    """The oracle itself: above or below the mutated path, or a known cross-field check."""
    assert _related("injection.benchmarks.web_shop.steps", ("injection", "benchmarks"))
    assert _related("injection", ("injection", "seed"))
    assert _related("agents.model", ("systems", 0))
    assert not _related("rollouts.max_steps", ("replay", "max_steps"))
