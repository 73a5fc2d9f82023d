"""A recording on disk: one run's model calls, one JSON line per call in call order
(`<run id>.jsonl`), and, once the program has ended, its outcome (`<run id>.run.json`).

Each call is written and flushed before its answer goes back to the program, so a
recording cut off by SIGKILL holds every call the program was answered; a line cut
in the middle is reported, never guessed. Reading is bounded: a line is at most
`MAX_LINE_BYTES` (the gateway takes bodies up to 8 MiB), a recording at most
`MAX_CALLS` calls, and each line's fields are checked for their type before use.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whowhen.errors import WhowhenError
from whowhen.gateway.exchange import Exchange
from whowhen.gateway.names import check_name
from whowhen.io import write_json

MAX_LINE_BYTES = 20 * 1024 * 1024
MAX_CALLS = 100_000
OUTCOME_SUFFIX = ".run.json"

_FIELDS: dict[str, type | tuple[type, ...]] = {
    "index": int,
    "agent": str,
    "request": dict,
    "message": dict,
    "source": str,
    "input_tokens": int,
    "output_tokens": int,
    "cost_usd": (int, float),
    "cached": bool,
}


def exchange_record(exchange: Exchange) -> dict[str, Any]:
    """One recorded call as a JSON line: who asked what, what was answered, at what cost."""
    return {
        "index": exchange.index,
        "agent": exchange.agent,
        "request": exchange.request,
        "message": exchange.message,
        "source": exchange.source,
        "input_tokens": exchange.input_tokens,
        "output_tokens": exchange.output_tokens,
        "cost_usd": exchange.cost_usd,
        "cached": exchange.cached,
    }


def record_path(folder: Path, run_id: str) -> Path:
    """The recording of run `run_id` in `folder`: a plain file name, never a path
    elsewhere (run ids are checked names)."""
    return Path(folder) / f"{check_name('run id', run_id)}.jsonl"


def outcome_path(folder: Path, run_id: str) -> Path:
    return Path(folder) / f"{check_name('run id', run_id)}{OUTCOME_SUFFIX}"


class Recorder:
    """A session listener that appends each call to `path` as it is answered."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def __call__(self, exchange: Exchange) -> None:
        line = json.dumps(exchange_record(exchange), sort_keys=True, ensure_ascii=False)
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()


@dataclass
class Recording:
    """One run read back: its calls, its outcome (None when the program never ended
    under the recorder), and one line per problem found."""

    run_id: str
    path: Path
    exchanges: list[Exchange] = field(default_factory=list)
    outcome: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)


def write_outcome(folder: Path, run_id: str, outcome: dict[str, Any]) -> Path:
    """The program's outcome beside its calls (sorted keys, no clock: same run, same bytes)."""
    return write_json(outcome_path(folder, run_id), outcome)


def recording_files(path: Path) -> list[Path]:
    """The recordings of `path`: itself when it is a file, else its `*.jsonl`, sorted."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise WhowhenError("no such recording file or folder", path=str(path))
    return sorted(p for p in path.glob("*.jsonl") if not p.name.startswith("."))


def read_recording(path: Path) -> Recording:
    """A recording file and its outcome file, each line checked (see the module)."""
    run_id = path.name.removesuffix(".jsonl")
    rec = Recording(run_id, path)
    try:
        check_name("run id", run_id)
    except ValueError as exc:
        rec.errors.append(str(WhowhenError(str(exc), path=str(path))))
        return rec
    with path.open("rb") as fh:
        for number, raw in enumerate(_lines(fh), 1):
            if number > MAX_CALLS:
                rec.errors.append(
                    _error(path, number, f"more than {MAX_CALLS} calls: the rest is not read")
                )
                break
            exchange = _exchange(path, number, raw, len(rec.exchanges), rec.errors)
            if exchange is None:
                break  # a later call's place in the run is unknown once one is unreadable
            rec.exchanges.append(exchange)
    rec.outcome = _outcome(outcome_path(path.parent, run_id), rec.errors)
    return rec


def _lines(fh: Any) -> Any:
    """The file's lines, each at most MAX_LINE_BYTES (a longer one is yielded cut, and
    fails to parse where it is)."""
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES:
            yield None
            return
        if raw.strip():
            yield raw


def _error(path: Path, number: int, what: str, name: str | None = None) -> str:
    return str(WhowhenError(what, path=str(path), record=f"line {number}", field=name))


def _exchange(
    path: Path, number: int, raw: bytes | None, expected: int, errors: list[str]
) -> Exchange | None:
    if raw is None:
        errors.append(_error(path, number, f"longer than {MAX_LINE_BYTES} bytes"))
        return None
    if not raw.endswith(b"\n"):
        errors.append(
            _error(
                path,
                number,
                "cut off mid-line (the recorder was stopped while "
                "writing): the calls before it are kept",
            )
        )
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        errors.append(_error(path, number, f"not JSON ({str(exc)[:120]})"))
        return None
    if not isinstance(data, dict):
        errors.append(_error(path, number, "not a JSON object"))
        return None
    for name, kind in _FIELDS.items():
        value = data.get(name)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            errors.append(_error(path, number, "missing or of the wrong type", name))
            return None
    if data["index"] != expected:
        errors.append(
            _error(
                path,
                number,
                f"call {data['index']} where call {expected} "
                "belongs (a recording holds one run's calls in order)",
                "index",
            )
        )
        return None
    return Exchange(
        data["index"],
        data["agent"],
        data["request"],
        data["message"],
        data["source"],
        data["input_tokens"],
        data["output_tokens"],
        float(data["cost_usd"]),
        data["cached"],
    )


def _outcome(path: Path, errors: list[str]) -> dict[str, Any] | None:
    if not path.exists():
        return None
    try:
        raw = path.read_bytes()[: MAX_LINE_BYTES + 1]
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        errors.append(str(WhowhenError(f"unreadable outcome ({str(exc)[:120]})", path=str(path))))
        return None
    success = data.get("success") if isinstance(data, dict) else "?"
    if success not in (True, False, None):
        errors.append(
            str(
                WhowhenError("success must be true, false or null", path=str(path), field="success")
            )
        )
        return None
    return data
