"""The config schema is the one place a default is written: the model layer, the dataset,
the stages, the command line and the perf scripts take theirs from it (`whowhen.defaults`),
and no code keeps a second copy that could drift from it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import yaml

import whowhen.dataset.build
import whowhen.models
import whowhen.registry  # registers scripted/standin
from whowhen.defaults import filled, section_defaults
from whowhen.models import make_client, make_runner

from .conftest import ROOT

SCHEMA = yaml.safe_load((ROOT / "src/whowhen/data/config.schema.yaml").read_text())
OWNERS = (
    *("params", "cfg", "config", "inj", "opts", "item", "attribution", "agents", "llm"),
    *("spec", "options"),  # an `imports:` entry
)
"""Names a config section goes by in the code (a `.get` on other data is not checked)."""
STAGE_CODE = [
    *(ROOT / f"src/whowhen/{p}/stage.py" for p in ("dataset", "attribution", "feedback")),
    ROOT / "src/whowhen/analysis/stage.py",
    ROOT / "src/whowhen/rollouts.py",
    ROOT / "src/whowhen/continuation.py",
    ROOT / "src/whowhen/taxonomy_stage.py",
    *sorted((ROOT / "src/whowhen/injection").glob("*.py")),
    *sorted((ROOT / "src/whowhen/feedback").glob("*.py")),
    *sorted((ROOT / "src/whowhen/analysis").glob("*.py")),
    *sorted((ROOT / "src/whowhen/attribution").glob("*.py")),
    *sorted((ROOT / "src/whowhen/dataset").glob("*.py")),
    *sorted((ROOT / "src/whowhen/imports").glob("*.py")),
    *sorted((ROOT / "src/whowhen/cli").glob("*.py")),
    *sorted((ROOT / "perf").glob("*.py")),
]


def _defaults(node: dict[str, Any]) -> dict[str, Any]:
    """Every default under a schema node, read here without whowhen.defaults."""
    out: dict[str, Any] = {}
    for key, sub in node.get("properties", {}).items():
        if "default" in sub:
            value = sub["default"]
            out[key] = {**value, **_defaults(sub)} if isinstance(value, dict) else value
    return out


def _keys(node: Any, with_default: bool) -> set[str]:
    """The config keys the schema gives a default (or, `with_default` false, none)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, sub in node.get("properties", {}).items():
            if isinstance(sub, dict) and ("default" in sub) == with_default:
                found.add(key)
        for sub in node.values():
            found |= _keys(sub, with_default)
    elif isinstance(node, list):
        for sub in node:
            found |= _keys(sub, with_default)
    return found


def test_no_second_table_of_defaults() -> None:
    assert not hasattr(whowhen.models, "LLM_DEFAULTS")
    assert not hasattr(whowhen.dataset.build, "DATASET_DEFAULTS")


@pytest.mark.parametrize(
    "section", ["llm", "dataset", "agents", "rollouts", "feedback", "sandbox", "continuation"]
)
def test_section_defaults_are_the_schemas(section: str) -> None:
    assert section_defaults(section) == _defaults(SCHEMA["properties"][section])


def test_a_partial_section_keeps_its_values_and_gets_the_rest() -> None:
    given = {"max_per_parent": {"dev": 2}, "max_last_share": 0.3}
    opts = filled("dataset", given)
    assert opts["max_per_parent"] == {"train": None, "dev": 2, "test": 1}
    assert opts["max_last_share"] == 0.3
    assert (
        opts["max_tenth_share"]
        == SCHEMA["properties"]["dataset"]["properties"]["max_tenth_share"]["default"]
    )
    assert given == {"max_per_parent": {"dev": 2}, "max_last_share": 0.3}  # not changed
    tracer = filled("attribution.tracer", None)
    assert tracer == _defaults(SCHEMA["properties"]["attribution"]["properties"]["tracer"])
    llm = filled("attribution", {"llm": [{"name": "a", "model": "m/x"}]})["llm"][0]
    assert llm["protocol"] == "all_at_once" and llm["max_step_chars"] == 2000
    with pytest.raises(KeyError, match="no config section"):
        filled("nonsense")


def test_a_partial_llm_section_gets_the_schemas_values(tmp_path: Path) -> None:
    expected = _defaults(SCHEMA["properties"]["llm"])
    client = make_client("scripted/standin", {"cache_dir": str(tmp_path / "c"), "max_retries": 1})
    assert client.max_retries == 1  # given
    assert client.timeout_s == expected["timeout_s"]
    assert client.max_concurrency == expected["max_concurrency"]
    assert client.cost_limit_usd == expected["cost_limit_usd"]
    assert client.progress == expected["progress"]
    runner = make_runner("openai/gpt-4o-mini", {"cache_dir": str(tmp_path / "c"), "batch": True})
    assert runner.poll_s == expected["batch_poll_s"]
    assert runner.client.timeout_s == expected["timeout_s"]


def test_the_command_line_takes_its_defaults_from_the_schema() -> None:
    from whowhen.cli import build_parser
    from whowhen.cli.defaults import PROJECT_CACHE

    llm = _defaults(SCHEMA["properties"]["llm"])
    assert llm["cache_dir"] == PROJECT_CACHE
    parser = build_parser()
    args = parser.parse_args(["attribute", "data", "--attributor", "all_at_once"])
    assert args.max_concurrency == llm["max_concurrency"]
    assert args.batch_poll == llm["batch_poll_s"]


def _fallbacks(path: Path, keys: set[str]) -> list[str]:
    """`x.get("key", literal)` calls on a key the schema gives a default."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in keys
            and ast.unparse(node.func.value).startswith(OWNERS)
            and isinstance(node.args[1], ast.Constant | ast.Dict | ast.List)
        ):
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_stage_repeats_a_schema_default_as_a_fallback() -> None:
    """A `.get(key, default)` beside the schema's default is a second copy that can drift
    (`slips` fell back to `natural` there, `controls` to 0 where the schema says 3)."""
    # a key some section leaves without a default (injection.benchmarks) may be absent
    keys = _keys(SCHEMA, True) - _keys(SCHEMA, False)
    assert {"slips", "controls", "figure_split", "protocol", "max_last_share"} <= keys
    found = [line for path in STAGE_CODE for line in _fallbacks(path, keys)]
    assert not found, "\n".join(found)


def test_the_fallback_finder_finds_one(tmp_path: Path) -> None:
    path = tmp_path / "probe.py"
    path.write_text('x = params["rollouts"].get("slips", "natural")\ny = d.get("slips")\n')
    assert _fallbacks(path, {"slips"}) == ["probe.py:1: params['rollouts'].get('slips', 'natural')"]
