"""The failure taxonomy: a versioned YAML in config (categories, modes with definitions,
examples and the action types they apply to), loaded and validated; mode ids are stable.

The taxonomy stage (`whowhen.taxonomy_stage`: it annotates with the attribution engine,
so it sits above it, outside this base-layer package) summarises the natural failures:
their overview per (benchmark, system), the modes the replay stage found (`overview.py`)
and candidate new modes clustered from the failures no mode fits (`propose.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from whowhen.errors import WhowhenError
from whowhen.io import read_yaml

TAXONOMY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["version", "categories", "modes"],
    "additionalProperties": False,
    "properties": {
        "version": {"type": "integer", "minimum": 1},
        "categories": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {"type": "string"},
        },
        "modes": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "category", "definition", "example", "action_types"],
                "properties": {
                    "id": {"type": "string", "pattern": r"^[a-z_]+\.[a-z_]+$"},
                    "category": {"type": "string"},
                    "definition": {"type": "string"},
                    "example": {"type": "string"},
                    "action_types": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                },
            },
        },
    },
}


@dataclass(frozen=True)
class Mode:
    id: str
    category: str
    definition: str
    example: str
    action_types: tuple[str, ...]


@dataclass(frozen=True)
class Taxonomy:
    version: int
    categories: dict[str, str]
    modes: tuple[Mode, ...]

    def mode(self, mode_id: str) -> Mode:
        for m in self.modes:
            if m.id == mode_id:
                return m
        raise WhowhenError(f"unknown failure mode {mode_id!r}", field="mode")

    def modes_for(self, action_type: str | None) -> list[Mode]:
        return [m for m in self.modes if action_type in m.action_types]

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "categories": self.categories,
            "modes": [
                {
                    "id": m.id,
                    "category": m.category,
                    "definition": m.definition,
                    "example": m.example,
                    "action_types": list(m.action_types),
                }
                for m in self.modes
            ],
        }


def parse_taxonomy(data: Any, source: str = "<taxonomy>") -> Taxonomy:
    """Validate a taxonomy document; errors name the file and the offending field."""
    try:
        jsonschema.validate(data, TAXONOMY_SCHEMA)
    except jsonschema.ValidationError as exc:
        where = ".".join(str(p) for p in exc.absolute_path) or "(top level)"
        raise WhowhenError(exc.message, path=source, field=where) from None
    modes = tuple(
        Mode(m["id"], m["category"], m["definition"], m["example"], tuple(m["action_types"]))
        for m in data["modes"]
    )
    seen: set[str] = set()
    for i, m in enumerate(modes):
        if m.category not in data["categories"]:
            raise WhowhenError(
                f"category {m.category!r} is not declared", path=source, field=f"modes.{i}.category"
            )
        if not m.id.startswith(f"{m.category}."):
            raise WhowhenError(
                f"mode id {m.id!r} must start with its category {m.category!r}",
                path=source,
                field=f"modes.{i}.id",
            )
        if m.id in seen:
            raise WhowhenError(f"duplicate mode id {m.id!r}", path=source, field=f"modes.{i}.id")
        seen.add(m.id)
    return Taxonomy(data["version"], dict(data["categories"]), modes)


def load_taxonomy(path: str | Path) -> Taxonomy:
    path = Path(path)
    if not path.exists():
        raise WhowhenError("taxonomy file not found", path=str(path))
    return parse_taxonomy(read_yaml(path), str(path))  # bounded: aliases, size


from whowhen.taxonomy.overview import failure_overview, mode_overview  # noqa: E402

__all__ = [
    "Mode",
    "Taxonomy",
    "failure_overview",
    "load_taxonomy",
    "mode_overview",
    "parse_taxonomy",
]
