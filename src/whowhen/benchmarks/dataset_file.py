"""Dataset-file benchmarks: a real benchmark's local JSONL or Parquet file, read through a
field mapping and scored with the benchmark's official rule.

Config (a `benchmarks:` entry under any name, recognised by its `file` key):

    gsm8k_local:
      file: data/gsm8k_test.jsonl      # .jsonl or .parquet
      fields: {id: id, question: question, answer: answer, choices: options, image: image}
      scoring: numeric                  # numeric | multiple_choice | relaxed | exact
      modality: text                    # text | image | video
      category: stem
      n_tasks: 100                      # optional: the first n records

`image` names a field holding one path (or a list of paths: video frames); relative paths
are read from the data file's folder, and each image is copied into the content-addressed
media store so steps reference what the agent saw. `choices` (a list, or a dict letter ->
text) is shown as lettered options. Such benchmarks have no scripted policy: a model plays
the agent (system `llm_react`), whose only tool is `final_answer`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from whowhen.benchmarks.base import AnswerEnv, Benchmark, Tool
from whowhen.benchmarks.scoring import SCORERS
from whowhen.errors import WhowhenError
from whowhen.io import parse_json
from whowhen.media import put_file
from whowhen.schema import MODALITIES, stable_id
from whowhen.tools import FINAL_ANSWER_TOOL

LETTERS = "ABCDEFGHIJ"
FIELDS = ("id", "question", "answer", "choices", "image")


@dataclass(frozen=True)
class Task:
    task_id: str
    question: str
    answer: str
    media: tuple[str, ...] = ()


def _is_file(path: str | Path) -> bool:
    """Path.is_file that says False, not OSError, for a name the system cannot look up."""
    try:
        return Path(path).is_file()
    except OSError:  # e.g. a file name over the system's length limit
        return False


def _records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise WhowhenError("benchmark file not found", path=str(path), field="file")
    if path.suffix == ".parquet":
        try:
            return pl.read_parquet(path).to_dicts()
        except Exception as exc:  # polars raises several error types for a bad file
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise WhowhenError(f"not a readable Parquet file ({first})", path=str(path)) from None
    if path.suffix not in (".jsonl", ".json"):
        raise WhowhenError("expected a .jsonl or .parquet file", path=str(path), field="file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise WhowhenError(f"cannot read ({exc.strerror})", path=str(path)) from None
    records = []
    # split on "\n" only: str.splitlines would also split inside a record at U+2028 & co
    for line_no, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        where = {"path": str(path), "record": f"line {line_no}"}
        record = parse_json(line, **where)
        if not isinstance(record, dict):
            raise WhowhenError("a record must be a JSON object", **where)
        records.append(record)
    return records


def _utf8(text: str, field: str, where: dict[str, str]) -> str:
    """`text`, or an error naming the field when it holds an unpaired surrogate (from a
    `\\ud800` JSON escape), which no prompt or table can carry."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise WhowhenError(
            f"text holds an unpaired surrogate (character {exc.start})", field=field, **where
        ) from None
    return text


def _choices_text(choices: Any, field: str, where: dict[str, str]) -> str:
    """Lettered options (A-J, what the multiple-choice rule reads) from a list, or the given
    letters of a dict; anything else is an error naming the field."""
    if isinstance(choices, dict):
        items = [(str(k), str(v)) for k, v in choices.items()]
    elif isinstance(choices, list | tuple):
        if len(choices) > len(LETTERS):
            raise WhowhenError(
                f"{len(choices)} choices: at most {len(LETTERS)} (A-J)", field=field, **where
            )
        items = [(LETTERS[i], str(v)) for i, v in enumerate(choices)]
    else:
        raise WhowhenError(
            f"choices must be a list or an object, got {type(choices).__name__}",
            field=field,
            **where,
        )
    return "\n".join(f"({letter}) {text}" for letter, text in items)


def load_tasks(name: str, cfg: dict[str, Any], seed: int = 0) -> list[Task]:
    """The file's records as tasks; a record missing a mapped field is an error that names
    the file, the record and the field."""
    path = Path(cfg["file"])
    fields = {f: f for f in ("id", "question", "answer")} | dict(cfg.get("fields", {}))
    records = _records(path)[: cfg.get("n_tasks")]
    tasks = []
    for index, record in enumerate(records):
        where = {"path": str(path), "record": str(record.get(fields["id"], index))}
        for key in ("question", "answer"):
            if record.get(fields[key]) in (None, ""):
                raise WhowhenError(f"no {key}", field=fields[key], **where)
        question = _utf8(str(record[fields["question"]]), fields["question"], where)
        if fields.get("choices") and record.get(fields["choices"]):
            options = _choices_text(record[fields["choices"]], fields["choices"], where)
            question += "\n\nOptions:\n" + _utf8(options, fields["choices"], where)
        media: list[str] = []
        if fields.get("image"):
            value = record.get(fields["image"])
            paths = value if isinstance(value, list) else [value] if value else []
            for item in paths:
                file = (path.parent / str(item)) if not Path(str(item)).is_absolute() else item
                if not _is_file(file):
                    raise WhowhenError(f"image {item!r} not found", field=fields["image"], **where)
                try:
                    media.append(put_file(file))
                except OSError as exc:
                    raise WhowhenError(
                        f"image {item!r} cannot be read ({exc.strerror})",
                        field=fields["image"],
                        **where,
                    ) from None
        raw_id = record.get(fields["id"], index)
        tasks.append(
            Task(
                f"{name}-{stable_id(name, path.name, raw_id)[:10]}",
                question,
                _utf8(str(record[fields["answer"]]), fields["answer"], where),
                tuple(media),
            )
        )
    return tasks


def make_benchmark(name: str, cfg: dict[str, Any]) -> Benchmark:
    """The registry entry for the dataset-file benchmark `name` configured by `cfg`."""
    scoring = cfg.get("scoring", "exact")
    if scoring not in SCORERS:
        raise WhowhenError(
            f"unknown scoring rule {scoring!r}; known: {', '.join(SCORERS)}",
            field=f"benchmarks.{name}.scoring",
        )
    modality = cfg.get("modality", "text")
    if modality not in MODALITIES:
        raise WhowhenError(f"unknown modality {modality!r}", field=f"benchmarks.{name}.modality")
    score = SCORERS[scoring]

    class FileEnv(AnswerEnv):
        benchmark, category = name, cfg.get("category", "other")

        def reset(self) -> str:
            self._start()
            seen = " (see the attached image)" if self.task_media else ""
            return (
                f"Answer the question{seen}. Tool: final_answer(answer).\n\n"
                f"Question: {self.task.question}"
            )

        def tools(self) -> dict[str, Tool]:
            return {}

        @staticmethod
        def score(answer: str | None, gold: str) -> bool:
            return score(answer, gold)

    FileEnv.modality = modality
    return Benchmark(
        name,
        modality,
        FileEnv.category,
        lambda c, seed: load_tasks(name, c, seed),
        FileEnv,
        (FINAL_ANSWER_TOOL,),
    )
