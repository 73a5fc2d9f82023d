"""Import the public Who&When benchmark (both subsets) into runs/steps/labels tables.

Format facts (checked on the released files): Algorithm-Generated entries carry `name`
and `role`; Hand-Crafted entries carry only a `role` such as "Orchestrator (thought)" or
"Orchestrator (-> WebSurfer)", whose agent is the part before the parenthesis.
`mistake_step` is a string holding a 0-based index into `history`; every history entry
is a step, and the original indexing is kept.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from whowhen.errors import WhowhenError, preview
from whowhen.imports.common import ImportResult, base_run, label_row, regular_files, step_row
from whowhen.io import parse_json
from whowhen.schema import canonical_json, stable_id

BENCHMARK = "who_and_when"
SUBSETS = ("Algorithm-Generated", "Hand-Crafted")
_PAREN = re.compile(r"^\s*(.*?)\s*\(.*\)\s*$")
_NUMBER = re.compile(r"[0-9]+")
HUMAN_ROLES = {"human", "user"}


def agent_of_role(role: str) -> str:
    """'Orchestrator (-> WebSurfer)' -> 'Orchestrator'; 'human' -> 'user' (not an agent)."""
    if role.strip().lower() in HUMAN_ROLES:
        return "user"
    match = _PAREN.match(role)
    return (match.group(1) if match else role).strip()


def subset_dirs(path: Path) -> list[tuple[str, Path]]:
    """DIR is one subset's folder, or a folder holding subset folders."""
    if not path.is_dir():
        raise WhowhenError("not a folder", path=str(path))
    if any(path.glob("*.json")):
        return [(path.name, path)]
    found = [(d.name, d) for d in sorted(path.iterdir()) if d.is_dir() and any(d.glob("*.json"))]
    if not found:
        raise WhowhenError("no Who&When JSON files here or in its sub-folders", path=str(path))
    return found


def _key(path: Path) -> tuple[int, int, str]:
    """Numbered files in numeric order, then the others by name. ASCII digits only:
    `str.isdigit` is also true of '²', which int() rejects, and no name may stop a sort."""
    stem = path.stem
    return (0, int(stem), stem) if _NUMBER.fullmatch(stem) else (1, 0, stem)


def _require(
    data: dict[str, Any], key: str, source: str, kind: type | tuple[type, ...] = str
) -> Any:
    if key not in data:
        raise WhowhenError("missing field", path=source, field=key)
    if not isinstance(data[key], kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        raise WhowhenError(
            f"expected {' or '.join(k.__name__ for k in kinds)}, got {type(data[key]).__name__}",
            path=source,
            field=key,
        )
    return data[key]


def parse_record(data: Any, subset: str, source: str) -> tuple[dict, list[dict], dict]:
    """One Who&When file -> (run, steps, label); WhowhenError names the file and field."""
    if not isinstance(data, dict):
        raise WhowhenError("top level must be a JSON object", path=source)
    history = _require(data, "history", source, list)
    if not history:
        raise WhowhenError("history is empty", path=source, field="history")
    question = _require(data, "question", source)
    agent = _require(data, "mistake_agent", source)
    raw_step = _require(data, "mistake_step", source, (str, int))
    try:
        step = int(str(raw_step).strip())
    except ValueError:
        raise WhowhenError(
            f"{preview(raw_step)} is not a step index", path=source, field="mistake_step"
        ) from None
    if not 0 <= step < len(history):
        raise WhowhenError(
            f"step {preview(step)} out of range (history has {len(history)} entries)",
            path=source,
            field="mistake_step",
        )
    task_id = str(data.get("question_ID") or Path(source).stem)
    run_id = stable_id("imported", BENCHMARK, subset, Path(source).name)
    steps = []
    for i, entry in enumerate(history):
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            raise WhowhenError(
                "entry needs a text 'content'", path=source, field=f"history.{i}.content"
            )
        role = entry.get("role")
        name = entry.get("name")
        if not isinstance(role, str) and not (isinstance(name, str) and name):
            raise WhowhenError(
                "entry needs a 'role' or 'name'", path=source, field=f"history.{i}.role"
            )
        actor = name if isinstance(name, str) and name else agent_of_role(role)
        steps.append(
            step_row(
                run_id, i, actor, entry["content"], role=role if isinstance(role, str) else None
            )
        )
    correct = data.get("is_correct", data.get("is_corrected"))
    meta = {"file": Path(source).name, "level": data.get("level"), "is_correct": correct}
    run = base_run(
        run_id,
        BENCHMARK,
        task_id,
        "magentic_one" if subset == "Hand-Crafted" else "captain_agent",
        "multi",
        subset=subset,
        question=question,
        category="general",
        gold_answer=None if data.get("ground_truth") is None else str(data["ground_truth"]),
        n_steps=len(history),
        meta=canonical_json(meta),
    )
    reason = data.get("mistake_reason")
    label = label_row(run_id, agent.strip(), step, reason if isinstance(reason, str) else None)
    return run, steps, label


def import_who_and_when(path: str | Path) -> ImportResult:
    """Import every `*.json` of one subset folder, or of every subset folder under `path`."""
    result = ImportResult()
    for subset, folder in subset_dirs(Path(path)):
        for file in regular_files(sorted(folder.glob("*.json"), key=_key), result):
            source = str(file)
            try:
                data = parse_json(file.read_bytes(), path=source)
                run, steps, label = parse_record(data, subset, source)
            except WhowhenError as exc:
                result.fail(exc)
                continue
            except OSError as exc:  # e.g. no permission, or removed since it was listed
                result.fail(WhowhenError(f"cannot read ({exc.strerror or exc})", path=source))
                continue
            result.add(run, steps, label, source, Path(source).stem)
    return result
