"""The config's defaults, read from its JSON schema (`whowhen/data/config.schema.yaml`),
the one place they are written. Base layer: the model layer, the dataset and the stages
fill a partial config section from here, without the config validator (which sits with
the entry points and imports the registry)."""

from __future__ import annotations

import copy
import functools
from importlib import resources
from typing import Any

import yaml

SCHEMA_FILE = ("data", "config.schema.yaml")


@functools.cache
def _schema() -> dict[str, Any]:
    """The package's own schema file: trusted data, so read by libyaml where PyYAML has it
    (a tenth of a second less in every job that fills a section; a user's YAML goes
    through the bounded `io.parse_yaml`)."""
    text = resources.files("whowhen").joinpath(*SCHEMA_FILE).read_text()
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def schema() -> dict[str, Any]:
    """The config's schema as written (parsed once; each caller gets its own copy)."""
    return copy.deepcopy(_schema())


def fill_defaults(value: Any, schema: dict[str, Any]) -> None:
    """Give `value` (in place) every default `schema` names for a key it lacks, at every
    depth, each item of an array of objects included; a value it has is kept."""
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            fill_defaults(item, schema["items"])
        return
    if not isinstance(value, dict):
        return
    for key, sub in schema.get("properties", {}).items():
        if key not in value and "default" in sub:
            value[key] = copy.deepcopy(sub["default"])
        if key in value:
            fill_defaults(value[key], sub)


def _section_schema(section: str) -> dict[str, Any]:
    """The schema of config section `section`, dotted for a nested one (`attribution.tracer`)."""
    node = _schema()
    for key in section.split("."):
        if key not in node.get("properties", {}):
            raise KeyError(f"no config section {section!r} in the schema")
        node = node["properties"][key]
    return node


def filled(section: str, partial: dict[str, Any] | None = None) -> dict[str, Any]:
    """Config section `section` (e.g. `llm`, or dotted: `attribution.tracer`) as given in
    `partial`, every key it leaves out taken from the schema's defaults; `partial` itself
    is not changed."""
    value = copy.deepcopy(partial) if partial is not None else {}
    fill_defaults(value, _section_schema(section))
    return value


def section_defaults(section: str) -> dict[str, Any]:
    """Every default of config section `section` (keys without a default are absent)."""
    return filled(section, {})
