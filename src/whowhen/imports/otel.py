"""Import OpenTelemetry traces of agent runs (OpenInference or GenAI conventions, OTLP
JSON) as runs and steps: one run per trace id.

Steps come in start-time order:
- a model span gives the agent's output messages (text: a message step; each tool call:
  an action step) and, before them, the input messages its agent's previous model span
  did not carry (`conversation.new_inputs`, the gateway importer's rule: the task or a
  hand-off as `user` steps, a tool result as an observation of the tool it answers);
- a tool span gives the tool's result as an observation (and the call itself as an action
  when no model output issued it), which the next model call carrying that result does
  not repeat (matched by call id, else by tool and text, each consumed once). A
  `final_answer` tool's result is the agent's answer handed back, no observation: a
  recording of the same program never sees it either.
The agent of a step is the nearest agent the span or its ancestors declare (agent spans,
`gen_ai.agent.name`, or `agent_attribute`); else, for a model span, the gateway's name
for it (`gateway.agents`: the role its system prompt declares, "You are the planner
agent" -> `planner`, else `agent-1`, `agent-2`, ... by system prompt, `agent` with none),
and for a tool span, the agent of the latest model span. Success comes from
`success_attribute` on the trace's spans, or an outcomes file (trace id -> success).
Runs come without labels; `whowhen import ... --labels FILE` joins them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whowhen.errors import WhowhenError
from whowhen.gateway.agents import AgentNames
from whowhen.imports.common import ImportResult, base_run, regular_files, step_row
from whowhen.imports.conversation import (
    FINAL_ANSWER,
    OBSERVATION_ROLES,
    Message,
    OpenCalls,
    canonical,
    new_inputs,
)
from whowhen.imports.formats import FORMATS, entry_file
from whowhen.imports.labels import read_rows
from whowhen.imports.otel_messages import (
    agent_name,
    is_model_span,
    is_tool_span,
    model_messages,
    tool_execution,
)
from whowhen.imports.otlp import Span, read_spans, trace_files
from whowhen.io import load_json
from whowhen.schema import canonical_json

BENCHMARK = "otel"
TRUE = ("true", "1", "ok", "success", "succeeded", "pass", "passed", "correct", "yes")


@dataclass(frozen=True)
class OtelOptions:
    agent_attribute: str | None = None
    success_attribute: str | None = None
    outcomes: dict[str, bool] = field(default_factory=dict)


@dataclass
class _Trace:
    """The steps of one trace as they are rebuilt."""

    trace_id: str
    spans: dict[str, Span]
    options: OtelOptions
    steps: list[dict[str, Any]] = field(default_factory=list)
    previous: dict[str, list[Message]] = field(default_factory=dict)  # agent -> last inputs
    open_calls: OpenCalls = field(default_factory=OpenCalls)  # issued, not yet answered
    # the tool spans' results (call id, tool, text) that no model call has carried yet
    unread: list[tuple[str | None, str, str]] = field(default_factory=list)
    pending: list[tuple[str | None, str]] = field(default_factory=list)  # issued, not run
    names: AgentNames = field(default_factory=AgentNames)
    last_agent: str = "agent"
    tokens: list[int] = field(default_factory=lambda: [0, 0])

    def agent_of(self, span: Span) -> str | None:
        """The agent the span or its nearest ancestor declares, if any."""
        current: Span | None = span
        while current is not None:
            name = agent_name(current, self.options.agent_attribute)
            if name:
                return name
            current = self.spans.get(current.parent_id or "")
        return None

    def add(self, actor: str, content: str, **kw: Any) -> None:
        self.steps.append(step_row(self.trace_id, len(self.steps), actor, content, **kw))

    def model(self, span: Span) -> None:
        inputs, outputs = model_messages(span)
        body = {"messages": [{"role": m.role, "content": m.content} for m in inputs]}
        agent = self.agent_of(span) or self.names.name(body)
        self.last_agent = agent
        for m in new_inputs(self.previous.get(agent), inputs):
            if m.role not in OBSERVATION_ROLES:
                self.add("user", m.content, role=m.role)
                continue
            tool = self.open_calls.answer(agent, m)
            if not self._read(m.tool_call_id, tool, m.content):
                self.add(tool, m.content, role="tool", kind="observation")
        self.previous[agent] = inputs
        n_in, n_out = _usage(span.attributes)
        self.tokens[0] += n_in
        self.tokens[1] += n_out
        for k, m in enumerate(outputs):
            usage = {"tokens_in": n_in, "tokens_out": n_out} if k == 0 else {}
            if not m.tool_calls:
                self._agent_step(agent, m.content, usage)
            self.open_calls.issue(agent, m.tool_calls)
            for j, call in enumerate(m.tool_calls):
                self.pending.append((call.id, call.name))
                text = m.content if j == 0 else ""
                self._agent_step(
                    agent, text, usage if j == 0 else {}, call.name, canonical(call.arguments)
                )

    def _agent_step(
        self,
        agent: str,
        content: str,
        usage: dict[str, int],
        tool: str | None = None,
        args: str | None = None,
    ) -> None:
        kind = "action" if tool else "message"
        self.add(agent, content, role="assistant", kind=kind, tool=tool, tool_args=args)
        for key, value in usage.items():
            self.steps[-1][key] = value

    def _issued(self, call_id: str | None, name: str) -> bool:
        """Whether a model output issued this tool execution (then consumed)."""
        k = _issued_index(self.pending, call_id, name)
        if k >= 0:
            del self.pending[k]
        return k >= 0

    def _read(self, call_id: str | None, tool: str, text: str) -> bool:
        """Whether a tool span already showed this result (then consumed): the same call
        id when both have one, else the same tool and text."""
        for k, (span_id, span_tool, span_text) in enumerate(self.unread):
            if call_id and span_id:
                same = call_id == span_id
            else:
                same = (tool, text) == (span_tool, span_text)
            if same:
                del self.unread[k]
                return True
        return False

    def tool(self, span: Span) -> None:
        call_id, name, args, result = tool_execution(span)
        if not self._issued(call_id, name):  # the application called it, no model output
            agent = self.agent_of(span) or self.last_agent
            self.add(agent, "", kind="action", tool=name, tool_args=canonical(args))
        if name == FINAL_ANSWER:
            return
        self.add(name, result, role="tool", kind="observation")
        self.unread.append((call_id, name, result))


def _issued_index(pending: list[tuple[str | None, str]], call_id: str | None, name: str) -> int:
    """The earliest issued, not yet run call this execution answers: the same id when
    the span has one, else the same tool name (ids are not unique across calls: a
    server may number each response's calls from 0)."""
    for k, (issued_id, issued_name) in enumerate(pending):
        if issued_name == name and (call_id is None or issued_id in (None, call_id)):
            return k
    return -1


def _usage(a: dict[str, Any]) -> tuple[int, int]:
    n_in = a.get("gen_ai.usage.input_tokens", a.get("llm.token_count.prompt", 0))
    n_out = a.get("gen_ai.usage.output_tokens", a.get("llm.token_count.completion", 0))
    return int(n_in or 0), int(n_out or 0)


def _truthy(value: Any) -> bool:
    return value is True or (not isinstance(value, bool) and str(value).strip().lower() in TRUE)


def _success(trace: _Trace, spans: list[Span]) -> tuple[bool, str]:
    """(success, where it came from)."""
    key = trace.options.success_attribute
    if trace.trace_id in trace.options.outcomes:
        return trace.options.outcomes[trace.trace_id], "outcomes file"
    for span in spans:
        if key and key in span.attributes:
            return _truthy(span.attributes[key]), f"attribute {key}"
    roots = [s for s in spans if s.parent_id not in trace.spans]
    if any(s.status_error for s in roots):
        return False, "root span status ERROR"
    return False, "unknown (no outcome given): imported as a failure"


def build_run(
    trace_id: str, spans: list[Span], options: OtelOptions, errors: list[str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One trace -> (run row, step rows); a span that cannot be read is one error line."""
    trace = _Trace(trace_id, {s.span_id: s for s in spans}, options)
    ordered = sorted(spans, key=lambda s: (s.start, s.end, s.span_id))
    for span in ordered:
        try:
            if is_model_span(span):
                trace.model(span)
            elif is_tool_span(span):
                trace.tool(span)
        except (ValueError, TypeError) as exc:
            errors.append(
                str(WhowhenError(str(exc), path=span.source, record=f"span {span.span_id}"))
            )
    success, why = _success(trace, ordered)
    agents = {
        s["actor"] for s in trace.steps if s["kind"] != "observation" and s["actor"] != "user"
    }
    service = str(ordered[0].resource.get("service.name", "")) if ordered else ""
    service = "" if service.startswith("unknown_service") else service
    question = next((s["content"] for s in trace.steps if s["actor"] == "user"), None)
    final = next((s["content"] for s in reversed(trace.steps) if s["actor"] in agents), None)
    run = base_run(
        trace_id,
        BENCHMARK,
        trace_id,
        service or "otel",
        "multi" if len(agents) > 1 else "single",
        subset=service or None,
        question=question,
        success=success,
        score=float(success),
        final_answer=final,
        n_steps=len(trace.steps),
        tokens_in=trace.tokens[0],
        tokens_out=trace.tokens[1],
        meta=canonical_json({"spans": len(spans), "success_from": why}),
    )
    return run, trace.steps


def import_otel(path: str | Path, options: OtelOptions | None = None) -> ImportResult:
    """Every trace in FILE or DIR's trace files: one run per trace id."""
    options = options or OtelOptions()
    result = ImportResult()
    errors: list[str] = []
    by_trace: dict[str, list[Span]] = {}
    root = Path(path) if Path(path).is_dir() else None
    for file in regular_files(trace_files(Path(path)), result, root):
        for span in read_spans(file, errors):
            by_trace.setdefault(span.trace_id, []).append(span)
    for trace_id in sorted(by_trace):
        run, steps = build_run(trace_id, by_trace[trace_id], options, errors)
        if not steps:
            errors.append(f"trace {trace_id}: no model or tool span with messages: not imported")
            continue
        result.add(run, steps, None, by_trace[trace_id][0].source, f"trace {trace_id}")
    for error in errors:
        result.fail(error)
    return result


def load_outcomes(path: str | Path) -> dict[str, bool]:
    """An outcomes file: a JSON object {trace id: success}, or rows (CSV, JSONL, a JSON
    list: `labels.read_rows`) with `trace_id` (or `run_id`) and `success`."""
    try:
        data = load_json(Path(path).read_bytes())
    except (OSError, ValueError):  # read_rows names what is wrong with the file
        data = None
    if isinstance(data, dict) and not {"trace_id", "run_id"} & set(data):
        return {str(k): _truthy(v) for k, v in data.items()}
    out = {}
    for k, row in enumerate(read_rows(path), 1):
        key = row.get("trace_id") or row.get("run_id")
        if key is None or "success" not in row:
            raise WhowhenError(
                "needs trace_id (or run_id) and success", path=str(path), record=str(k)
            )
        out[str(key)] = _truthy(row["success"])
    return out


@FORMATS.register(
    "otel",
    description="OpenTelemetry traces (OTLP JSON; OpenInference or GenAI conventions): a run "
    "per trace",
    options=("agent_attribute", "success_attribute", "outcomes"),
    metavar="FILE|DIR",
    path_help="a trace file, or a folder of them",
)
def read(path: Path, options: dict[str, Any], root: Path | None) -> ImportResult:
    """An `imports:` entry of this format: `agent_attribute`, `success_attribute` and an
    `outcomes` file (each unset: none)."""
    outcomes = options.get("outcomes")
    return import_otel(
        path,
        OtelOptions(
            options.get("agent_attribute"),
            options.get("success_attribute"),
            load_outcomes(entry_file(root, outcomes)) if outcomes else {},
        ),
    )
