"""Who&When files for the importer tests: the shared sample's folder and small records of
both subsets, written as the dataset ships them (one JSON file per record)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import SHARED

SAMPLE = SHARED / "data" / "who_and_when_sample"
needs_sample = pytest.mark.skipif(not SAMPLE.exists(), reason="../shared Who&When sample absent")


def ag_record(step: str = "1", **over) -> dict:
    """An Algorithm-Generated record (entries with `name`); `over` replaces fields."""
    record = {
        "is_correct": False,
        "question": "What is 2+2?",
        "question_ID": "q1",
        "level": "1",
        "ground_truth": "4",
        "history": [
            {"content": "Plan: add.", "role": "assistant", "name": "Planner"},
            {"content": "2+2=5", "role": "user", "name": "Math_Expert"},
            {"content": "exitcode: 0", "role": "user", "name": "Computer_terminal"},
        ],
        "mistake_agent": "Math_Expert",
        "mistake_step": step,
        "mistake_reason": "bad sum",
    }
    record.update(over)
    return record


def hc_record() -> dict:
    """A Hand-Crafted record: roles like `Orchestrator (-> WebSurfer)`, `is_corrected`."""
    return {
        "question": "Find X",
        "ground_truth": "X",
        "is_corrected": "False",
        "history": [
            {"content": "Find X", "role": "human"},
            {"content": "plan", "role": "Orchestrator (thought)"},
            {"content": "please look", "role": "Orchestrator (-> WebSurfer)"},
            {"content": "found Y", "role": "WebSurfer"},
        ],
        "mistake_agent": "WebSurfer",
        "mistake_step": "3",
        "mistake_reason": "wrong page",
    }


def write_files(folder: Path, files: dict[str, object]) -> Path:
    """Write each file name's text, or its data as JSON, into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_text(data if isinstance(data, str) else json.dumps(data))
    return folder
