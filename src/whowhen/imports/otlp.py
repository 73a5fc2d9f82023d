"""Read OTLP JSON trace files (what the OpenTelemetry collector's file exporter and the
OTLP/HTTP JSON encoding write) into flat `Span` records.

A file holds one `{"resourceSpans": [...]}` request, or one per line (JSON Lines, the
file exporter's layout). Attribute values are OTLP `AnyValue`s (`stringValue`,
`intValue` as a decimal string, `arrayValue`, ...); ids are hex strings per the OTLP
JSON spec, or base64 as a generic protobuf JSON mapping writes them: both are read.
A span that cannot be read is one error line naming the file and the span; the others
are kept.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whowhen.errors import WhowhenError, preview
from whowhen.io import load_json, not_utf8

_HEX = re.compile(r"[0-9a-fA-F]+")
SUFFIXES = (".json", ".jsonl", ".ndjson")


@dataclass(frozen=True)
class Span:
    """One span, its attributes flattened to Python values, its events as (name, attrs)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    events: tuple[tuple[str, dict[str, Any]], ...] = ()
    status_error: bool = False
    source: str = ""
    resource: dict[str, Any] = field(default_factory=dict)


def any_value(value: Any) -> Any:
    """An OTLP AnyValue as a Python value (an unknown shape is kept as it is)."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values", []))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def attributes(items: Any) -> dict[str, Any]:
    """OTLP `[{"key": k, "value": AnyValue}]` as a dict."""
    if not isinstance(items, list):
        raise ValueError("attributes must be a list of {key, value}")
    return {str(kv["key"]): any_value(kv.get("value")) for kv in items}


def hex_id(value: Any) -> str:
    """A trace or span id as lowercase hex, from hex (OTLP JSON) or base64 (protobuf JSON)."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"id {preview(value)} is not a string")
    if len(value) in (16, 32) and _HEX.fullmatch(value):
        return value.lower()
    try:
        return base64.b64decode(value, validate=True).hex()
    except (binascii.Error, ValueError):
        raise ValueError(f"id {preview(value)} is neither hex nor base64") from None


def _span(raw: dict[str, Any], resource: dict[str, Any], source: str) -> Span:
    parent = raw.get("parentSpanId")
    status = raw.get("status") or {}
    return Span(
        trace_id=hex_id(raw.get("traceId")),
        span_id=hex_id(raw.get("spanId")),
        parent_id=hex_id(parent) if parent else None,
        name=str(raw.get("name", "")),
        start=int(raw.get("startTimeUnixNano", 0)),
        end=int(raw.get("endTimeUnixNano", 0)),
        attributes=attributes(raw.get("attributes", [])),
        events=tuple(
            (str(e.get("name", "")), attributes(e.get("attributes", [])))
            for e in raw.get("events", [])
        ),
        status_error=status.get("code") in (2, "STATUS_CODE_ERROR"),
        source=source,
        resource=resource,
    )


def _requests(data: bytes, source: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed request) for a whole-file JSON or a JSON Lines file; a
    WhowhenError naming the file (and line) for bytes that are not UTF-8 or JSON, or
    nesting past MAX_JSON_DEPTH."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WhowhenError(not_utf8(exc), path=source) from None
    try:
        yield 0, load_json(text)
        return
    except json.JSONDecodeError:
        pass
    except ValueError as exc:  # nested too deeply
        raise WhowhenError(f"bad JSON ({exc})", path=source) from None
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                yield number, load_json(line)
            except json.JSONDecodeError as exc:
                raise WhowhenError(f"line {number}: bad JSON ({exc.msg})", path=source) from None
            except ValueError as exc:
                raise WhowhenError(f"line {number}: bad JSON ({exc})", path=source) from None


def read_spans(path: Path, errors: list[str]) -> list[Span]:
    """Every readable span of one file; a bad span or file adds one line to `errors`."""
    source = str(path)
    try:
        requests = list(_requests(path.read_bytes(), source))
    except WhowhenError as exc:
        errors.append(str(exc))
        return []
    except OSError as exc:
        errors.append(str(WhowhenError(f"cannot read ({exc.strerror or exc})", path=source)))
        return []
    spans: list[Span] = []
    for line, request in requests:
        if not isinstance(request, dict) or "resourceSpans" not in request:
            where = f"line {line}: " if line else ""
            errors.append(f"{source}: {where}not an OTLP trace export (no resourceSpans)")
            continue
        for rs in request.get("resourceSpans") or []:
            try:
                resource = attributes((rs.get("resource") or {}).get("attributes", []))
            except (ValueError, TypeError, KeyError, AttributeError):
                resource = {}
            for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []:
                for k, raw in enumerate(ss.get("spans") or []):
                    try:
                        spans.append(_span(raw, resource, source))
                    except (ValueError, TypeError, KeyError, AttributeError) as exc:
                        name = raw.get("spanId", k) if isinstance(raw, dict) else k
                        error = WhowhenError(str(exc), path=source, record=f"span {name}")
                        errors.append(str(error))
    return spans


def trace_files(path: Path) -> list[Path]:
    """FILE, or the trace files (`*.json`, `*.jsonl`, `*.ndjson`) under DIR, in order."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise WhowhenError("no such file or folder", path=str(path))
    files = sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
    if not files:
        raise WhowhenError(f"no trace files ({', '.join(SUFFIXES)}) here", path=str(path))
    return files
