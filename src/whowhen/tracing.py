"""Record your own agent's runs for `whowhen import otel`: an OpenTelemetry span exporter
that appends OTLP JSON (one export request per line, ids in hex: what the collector's
file exporter writes) to a file. Needs the `otel` extra (the OpenTelemetry SDK):

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from whowhen.tracing import OtlpJsonFileExporter

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OtlpJsonFileExporter("traces.jsonl")))

A collector with its file exporter, or any OTLP JSON dump, serves as well.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

_IDS = ("traceId", "spanId", "parentSpanId")


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """An OTLP JSON export request for `spans`, ids in hex as the OTLP JSON spec says (a
    generic protobuf JSON mapping writes them in base64)."""
    request = MessageToDict(encode_spans(spans))
    for rs in request.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for key in _IDS:
                    if span.get(key):
                        span[key] = base64.b64decode(span[key]).hex()
    return request


class OtlpJsonFileExporter(SpanExporter):
    """Appends each batch of finished spans to `path` as one line of OTLP JSON."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        line = json.dumps(otlp_json(spans), ensure_ascii=False)
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None
