"""Import the public Who&When benchmark (both subsets) into runs/steps/labels tables.

Format facts (checked on the released files): Algorithm-Generated entries carry `name`
and `role`; Hand-Crafted entries carry only a `role` such as "Orchestrator (thought)" or
"Orchestrator (-> WebSurfer)", whose agent is the part before the parenthesis.
`mistake_step` is a string holding a 0-based index into `history`; every history entry
is a step, and the original indexing is kept. Each file's subset (and so its system) is
read from its entries, never from its folder's name. The raw role stays in the steps'
`role` column, whose detail `show` and LLM prompts print (`schema.step_label`).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whowhen.errors import WhowhenError, preview
from whowhen.imports.common import ImportResult, base_run, label_row, regular_files, step_row
from whowhen.imports.formats import FORMATS
from whowhen.io import parse_json
from whowhen.schema import canonical_json, stable_id

BENCHMARK = "who_and_when"
SUBSETS = ("Algorithm-Generated", "Hand-Crafted")
SYSTEMS = {"Algorithm-Generated": "captain_agent", "Hand-Crafted": "magentic_one"}
TOOL_SPEAKERS = ("Computer_terminal", "ComputerTerminal")
"""Who&When's tool-output speakers (AG's code executor, Magentic-One's terminal): they
print what code did and decide nothing, so their steps import as observations and no
attributor takes them for a candidate agent."""
MAGENTIC_ONE = (
    "Orchestrator", "WebSurfer", "FileSurfer", "Coder", "Assistant", "ComputerTerminal",
)  # fmt: skip
_PAREN = re.compile(r"^\s*(.*?)\s*\(.*\)\s*$")
_NUMBER = re.compile(r"[0-9]+")
HUMAN_ROLES = {"human", "user"}


@dataclass
class Parsed:
    """One file's rows, and the warnings about its (kept) label."""

    run: dict[str, Any]
    steps: list[dict[str, Any]]
    label: dict[str, Any]
    warnings: list[str]


def agent_of_role(role: str) -> str:
    """'Orchestrator (-> WebSurfer)' -> 'Orchestrator'; 'human' -> 'user' (not an agent)."""
    if role.strip().lower() in HUMAN_ROLES:
        return "user"
    match = _PAREN.match(role)
    return (match.group(1) if match else role).strip()


def _named(entry: object) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("name"), str) and bool(entry["name"])


def _magentic(entry: object) -> bool:
    """A role-only entry in Magentic-One's form: 'Agent (detail)' or one of its agents."""
    role = entry.get("role") if isinstance(entry, dict) and not _named(entry) else None
    return isinstance(role, str) and (bool(_PAREN.match(role)) or role.strip() in MAGENTIC_ONE)


def detect_subset(history: list[Any]) -> str:
    """Which subset a file is, from its entries (folder names say nothing: a renamed or
    merged folder must import the same). Algorithm-Generated entries name their speaker
    (`name`); Hand-Crafted ones carry only a Magentic-One `role`. A file with no named
    entry is Hand-Crafted; a mixed one goes by the majority."""
    named = sum(_named(e) for e in history)
    return SUBSETS[0] if named > sum(_magentic(e) for e in history) else SUBSETS[1]


def json_files(path: Path) -> list[Path]:
    """DIR's `*.json`, or else those of its sub-folders (the release's layout), in order."""
    if not path.is_dir():
        raise WhowhenError("not a folder", path=str(path))
    if any(path.glob("*.json")):
        return sorted(path.glob("*.json"), key=_key)
    folders = [d for d in sorted(path.iterdir()) if d.is_dir() and any(d.glob("*.json"))]
    if not folders:
        raise WhowhenError("no Who&When JSON files here or in its sub-folders", path=str(path))
    return [file for d in folders for file in sorted(d.glob("*.json"), key=_key)]


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


def _gold_step(data: dict[str, Any], n_steps: int, source: str) -> int:
    raw_step = _require(data, "mistake_step", source, (str, int))
    try:
        step = int(str(raw_step).strip())
    except ValueError:
        raise WhowhenError(
            f"{preview(raw_step)} is not a step index", path=source, field="mistake_step"
        ) from None
    if not 0 <= step < n_steps:
        raise WhowhenError(
            f"step {preview(step)} out of range (history has {n_steps} entries)",
            path=source,
            field="mistake_step",
        )
    return step


def _steps(
    run_id: str, history: list[Any], tool_speakers: Collection[str], source: str
) -> list[dict[str, Any]]:
    """Every entry is a step (original indexing); a tool speaker's is an observation, and
    so is an entry whose chat role is `tool` (what a tool's output carries in an exported
    built run; Who&When's own files never use that role)."""
    steps = []
    for i, entry in enumerate(history):
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            raise WhowhenError(
                "entry needs a text 'content'", path=source, field=f"history.{i}.content"
            )
        role = entry.get("role")
        if not isinstance(role, str) and not _named(entry):
            raise WhowhenError(
                "entry needs a 'role' or 'name'", path=source, field=f"history.{i}.role"
            )
        actor = entry["name"] if _named(entry) else agent_of_role(role)
        kind = "observation" if actor in tool_speakers or role == "tool" else "message"
        steps.append(
            step_row(
                run_id,
                i,
                actor,
                entry["content"],
                role=role if isinstance(role, str) else None,
                kind=kind,
            )
        )
    return steps


def label_warning(
    source: str, agent: str, step: dict[str, Any], tool_speakers: Collection[str]
) -> str | None:
    """A public label whose gold step is not the gold agent's (or is tool output) is kept
    as published, but said: an attributor cannot get both right on it."""
    speaker = step["actor"]
    if speaker in tool_speakers:
        return (
            f"{source}: gold step {step['step']} is tool output of {preview(speaker)} "
            f"(imported as an observation, not a candidate step); gold agent {preview(agent)}"
        )
    if speaker != agent:
        return (
            f"{source}: gold agent {preview(agent)} but gold step {step['step']} "
            f"is spoken by {preview(speaker)}"
        )
    return None


def parse_record(
    data: Any,
    source: str,
    subset: str | None = None,
    tool_speakers: Collection[str] = TOOL_SPEAKERS,
    run_key: str | None = None,
) -> Parsed:
    """One Who&When file -> its rows; WhowhenError names the file and field. `subset`
    None: detected from the entries. `run_key` (default the file name) makes the run id."""
    if not isinstance(data, dict):
        raise WhowhenError("top level must be a JSON object", path=source)
    history = _require(data, "history", source, list)
    if not history:
        raise WhowhenError("history is empty", path=source, field="history")
    question = _require(data, "question", source)
    agent = _require(data, "mistake_agent", source).strip()
    step = _gold_step(data, len(history), source)
    subset = subset or detect_subset(history)
    task_id = str(data.get("question_ID") or Path(source).stem)
    run_id = stable_id("imported", BENCHMARK, subset, run_key or Path(source).name)
    steps = _steps(run_id, history, tool_speakers, source)
    correct = data.get("is_correct", data.get("is_corrected"))
    meta = {"file": Path(source).name, "level": data.get("level"), "is_correct": correct}
    run = base_run(
        run_id,
        BENCHMARK,
        task_id,
        SYSTEMS[subset],
        "multi",
        subset=subset,
        question=question,
        category="general",
        gold_answer=None if data.get("ground_truth") is None else str(data["ground_truth"]),
        n_steps=len(history),
        meta=canonical_json(meta),
    )
    reason = data.get("mistake_reason")
    label = label_row(run_id, agent, step, reason if isinstance(reason, str) else None)
    warning = label_warning(source, agent, steps[step], tool_speakers)
    return Parsed(run, steps, label, [warning] if warning else [])


def import_who_and_when(
    path: str | Path,
    subset: str | None = None,
    tool_speakers: Collection[str] = TOOL_SPEAKERS,
) -> ImportResult:
    """Import every `*.json` of `path` (or of its sub-folders), each file's subset detected
    from its content unless `subset` names one for all."""
    if subset is not None and subset not in SUBSETS:
        raise WhowhenError(f"subset {subset!r} is not one of {', '.join(SUBSETS)}")
    speakers = list(dict.fromkeys(tool_speakers))
    result = ImportResult()
    result.info = {"subset": subset or "detected", "tool_speakers": speakers}
    taken: set[str] = set()
    for file in regular_files(json_files(Path(path)), result, root=Path(path)):
        source = str(file)
        try:
            data = parse_json(file.read_bytes(), path=source)
            record = parse_record(data, source, subset, speakers)
            if record.run["run_id"] in taken:  # same name and subset in two sub-folders
                key = str(file.relative_to(Path(path)))
                record = parse_record(data, source, subset, speakers, run_key=key)
        except WhowhenError as exc:
            result.fail(exc)
            continue
        except OSError as exc:  # e.g. no permission, or removed since it was listed
            result.fail(WhowhenError(f"cannot read ({exc.strerror or exc})", path=source))
            continue
        if result.add(record.run, record.steps, record.label, source, Path(source).stem):
            taken.add(record.run["run_id"])
            result.warnings.extend(record.warnings)
    return result


def parse_tool_speakers(text: str | None) -> list[str]:
    """`--tool-speakers A,B` -> [A, B]; '' -> none; None (not given) -> Who&When's."""
    if text is None:
        return list(TOOL_SPEAKERS)
    return [name.strip() for name in text.split(",") if name.strip()]


@FORMATS.register(
    "who_and_when",
    description="the Who&When benchmark's JSON files",
    options=("subset", "tool_speakers"),
    metavar="DIR",
    path_help="one subset's folder, or the folder of both",
)
def read(path: Path, options: dict[str, Any], root: Path | None) -> ImportResult:
    """An `imports:` entry of this format: `subset` (unset: detected per file) and
    `tool_speakers` (unset: Who&When's own)."""
    speakers = options.get("tool_speakers")
    return import_who_and_when(
        path, options.get("subset"), TOOL_SPEAKERS if speakers is None else speakers
    )
