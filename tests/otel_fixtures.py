"""Real traces for the OpenTelemetry importer's tests: a two-agent run made with the
`openai` client against the test server, its model calls instrumented by a real
instrumentation (OpenInference's, or the official GenAI one), its agent and tool spans
made by the application as agent frameworks make them, exported as OTLP JSON.

`two_agent_run` returns what the agents did, recorded by the application itself, so a
test can compare the imported steps with it. The runs happen in a child process, one per
convention (every variant a test asks for at once), cached: an instrumentor patches the
`openai` module for the whole process, and not every one undoes it cleanly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from whowhen.standin.server import Behaviour, TestServer
from whowhen.tracing import OtlpJsonFileExporter

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two numbers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            },
        },
    }
]


def responder(prompt: str, schema: dict[str, Any] | None) -> str:
    """The two agents' model: the researcher calls `add`, then reports; the writer answers."""
    if "You are the writer" in prompt:
        return "Final answer: 5"
    if "I will add them." in prompt:  # the tool call is in the history: report the result
        return "The sum is 5."
    return 'I will add them.\nAction: add({"a": 2, "b": 3})'


@contextmanager
def instrumented(convention: str) -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """A tracer provider whose OpenAI calls are instrumented with `convention`
    (`openinference`, `genai`: the official GenAI instrumentation, or `openllmetry`), spans
    kept in memory."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    if convention == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor
    elif convention == "openllmetry":  # Traceloop's; it writes the GenAI attributes too
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor
    else:
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield provider, exporter
    finally:
        instrumentor.uninstrument()


def _agent_span(tracer: Any, convention: str, name: str) -> Any:
    if convention == "openinference":
        attrs = {"openinference.span.kind": "AGENT", "agent.name": name}
        return tracer.start_as_current_span(name, attributes=attrs)
    attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    return tracer.start_as_current_span(f"invoke_agent {name}", attributes=attrs)


def _tool_span(tracer: Any, convention: str, call: Any, result: str) -> None:
    if convention == "openinference":
        attrs = {
            "openinference.span.kind": "TOOL",
            "tool.name": call.function.name,
            "input.value": call.function.arguments,
            "output.value": result,
            "tool_call.id": call.id,
        }
    else:
        attrs = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.function.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.call.arguments": call.function.arguments,
            "gen_ai.tool.call.result": result,
        }
    with tracer.start_as_current_span(f"execute_tool {call.function.name}", attributes=attrs):
        pass


VARIANTS = ((False, True), (False, False), (True, True))
"""(success, tool_spans) of the runs made per convention."""
_CACHE: dict[str, dict[str, Any]] = {}


def two_agent_run(
    convention: str, out: Path, success: bool = False, tool_spans: bool = True
) -> list[tuple]:
    """A run of `convention` and variant, its trace written to `out` (see `_run_here`)."""
    if convention not in _CACHE:
        code = f"from tests.otel_fixtures import _child; _child({convention!r})"
        root = Path(__file__).resolve().parents[1]
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        _CACHE[convention] = json.loads(proc.stdout.strip().splitlines()[-1])
    made = _CACHE[convention][f"{success}-{tool_spans}"]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(made["trace"])
    return [tuple(step) for step in made["did"]]


def _child(convention: str) -> None:
    """In the child process: every variant, printed as one JSON line."""
    made = {}
    with tempfile.TemporaryDirectory() as tmp:
        for success, tool_spans in VARIANTS:
            out = Path(tmp) / f"{success}-{tool_spans}.json"
            did = _run_here(convention, out, success, tool_spans)
            made[f"{success}-{tool_spans}"] = {"trace": out.read_text(), "did": did}
    print(json.dumps(made))


def _run_here(
    convention: str, out: Path, success: bool = False, tool_spans: bool = True
) -> list[tuple]:
    """Run the two agents once, write the trace as OTLP JSON (hex ids, as the collector's
    file exporter writes) to `out`, and return the steps as (actor, kind, content, tool,
    args) in the order they happened. `tool_spans=False`: the application does not trace
    its tool, whose result then shows only in the next model call's input."""
    did: list[tuple] = []
    with (
        instrumented(convention) as (provider, exporter),
        TestServer(Behaviour(responder=responder)) as srv,
    ):
        tracer = provider.get_tracer("two-agent-app")
        client = openai.OpenAI(base_url=srv.url + "/v1", api_key="test", max_retries=0)
        with tracer.start_as_current_span("run", attributes={"app.success": success}):
            with _agent_span(tracer, convention, "researcher"):
                task = "Add 2 and 3."
                did.append(("user", "message", task, None, None))
                msgs: list[Any] = [
                    {"role": "system", "content": "You are the researcher."},
                    {"role": "user", "content": task},
                ]
                reply = client.chat.completions.create(model="mock", messages=msgs, tools=TOOLS)
                message = reply.choices[0].message
                call = message.tool_calls[0]
                args = json.loads(call.function.arguments)
                did.append(("researcher", "action", message.content, "add", args))
                result = str(args["a"] + args["b"])
                if tool_spans:
                    _tool_span(tracer, convention, call, result)
                did.append(("add", "observation", result, None, None))
                msgs += [
                    message.model_dump(exclude_none=True),
                    {"role": "tool", "tool_call_id": call.id, "content": result},
                ]
                reply = client.chat.completions.create(model="mock", messages=msgs, tools=TOOLS)
                report = reply.choices[0].message.content
                did.append(("researcher", "message", report, None, None))
            with _agent_span(tracer, convention, "writer"):
                handoff = f"Researcher says: {report}"
                did.append(("user", "message", handoff, None, None))
                reply = client.chat.completions.create(
                    model="mock",
                    messages=[
                        {"role": "system", "content": "You are the writer."},
                        {"role": "user", "content": handoff},
                    ],
                )
                did.append(("writer", "message", reply.choices[0].message.content, None, None))
        provider.force_flush()
        spans = exporter.get_finished_spans()
    write_otlp_json(spans, out)
    return did


def write_otlp_json(spans: Any, out: Path) -> Path:
    """OTLP JSON as the collector's file exporter writes it, by the package's exporter."""
    out.parent.mkdir(parents=True, exist_ok=True)
    OtlpJsonFileExporter(out).export(spans)
    return out


def smolagents_run(out: Path) -> tuple[str, list[tuple]]:
    """A smolagents `ToolCallingAgent` (a real agent framework) solving a sum with an `add`
    tool against the test server, traced by OpenInference's smolagents instrumentation, in
    a child process. Returns (the task, the steps the agent's own memory holds after the
    task: per action step its tool calls, then each call's observation but the final
    answer's)."""
    code = "from tests.otel_fixtures import _smolagents_child; _smolagents_child()"
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    made = json.loads(proc.stdout.strip().splitlines()[-1])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(made["trace"])
    return made["task"], [tuple(step) for step in made["did"]]


def _smol_responder(prompt: str, schema: dict[str, Any] | None) -> str:
    if "5" in prompt.split("Add 2 and 3.")[-1]:  # the observation is in the history
        return 'The sum is 5.\nAction: final_answer({"answer": "5"})'
    return 'I will add them.\nAction: add({"a": 2, "b": 3})'


def _smolagents_child() -> None:
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    from smolagents import OpenAIModel, ToolCallingAgent, tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: the first number
            b: the second number
        """
        return a + b

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    SmolagentsInstrumentor().instrument(tracer_provider=provider)
    task = "Add 2 and 3."
    with TestServer(Behaviour(responder=_smol_responder)) as srv:
        model = OpenAIModel(model_id="mock", api_base=srv.url + "/v1", api_key="test")
        agent = ToolCallingAgent(tools=[add], model=model, max_steps=4, verbosity_level=0)
        agent.run(task)
    did = []
    for step in agent.memory.steps:
        for k, call in enumerate(getattr(step, "tool_calls", None) or []):
            text = (step.model_output_message.content or "") if k == 0 else ""
            did.append(("ToolCallingAgent", "action", text, call.name, call.arguments))
            if call.name != "final_answer":
                did.append((call.name, "observation", str(step.observations), None, None))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "trace.json"
        write_otlp_json(exporter.get_finished_spans(), out)
        print(json.dumps({"task": task, "did": did, "trace": out.read_text()}))


PROGRAM_TASK = ("Multiply 6 by 7.", "42")
"""The task `tests/smolagents_program.py` is run on, and the answer it must give."""
_PROGRAM_CACHE: dict[str, Any] = {}


def start_smolagents_program_traces() -> None:
    """Start the child process of `smolagents_program_traces` now (once), so that it runs
    while the caller does something else."""
    if "child" not in _PROGRAM_CACHE:
        code = "from tests.otel_fixtures import _program_child; _program_child()"
        root = Path(__file__).resolve().parents[1]
        _PROGRAM_CACHE["child"] = subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


def smolagents_program_traces(out: Path) -> dict[str, Path]:
    """`tests/smolagents_program.py` run on `PROGRAM_TASK` against the test server (slips
    off), once under OpenInference's smolagents instrumentation and once under the GenAI
    OpenAI instrumentation, in one child process (cached): convention -> its trace file in
    `out/<convention>/`."""
    start_smolagents_program_traces()
    if "made" not in _PROGRAM_CACHE:
        stdout, stderr = _PROGRAM_CACHE["child"].communicate(timeout=120)
        assert _PROGRAM_CACHE["child"].returncode == 0, stderr[-3000:]
        _PROGRAM_CACHE["made"] = json.loads(stdout.strip().splitlines()[-1])
    files = {}
    for convention, made in _PROGRAM_CACHE["made"].items():
        assert made["exit"] == 0, f"the program failed under {convention}"
        files[convention] = out / convention / "trace.json"
        files[convention].parent.mkdir(parents=True, exist_ok=True)
        files[convention].write_text(made["trace"])
    return files


def _program_child() -> None:
    """In the child process: the program under each instrumentation, printed as one JSON
    line. GenAI's spans get a root span, as an application that traces its runs makes one
    (else each model call is a trace of its own); smolagents' instrumentation makes its own
    agent spans."""
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    from tests import smolagents_program

    made = {}
    with tempfile.TemporaryDirectory() as tmp, TestServer(Behaviour(slip_rate=0.0)) as srv:
        os.environ.update(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="test")
        with instrumented("genai") as (provider, exporter):
            with provider.get_tracer("program").start_as_current_span("run"):
                code = smolagents_program.main(*PROGRAM_TASK)
            made["genai"] = _exported(exporter, Path(tmp) / "genai.json", code)
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        instrumentor = SmolagentsInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            code = smolagents_program.main(*PROGRAM_TASK)
        finally:
            instrumentor.uninstrument()
        made["openinference"] = _exported(exporter, Path(tmp) / "oi.json", code)
    print(json.dumps(made))


def _exported(exporter: InMemorySpanExporter, out: Path, code: int) -> dict[str, Any]:
    write_otlp_json(exporter.get_finished_spans(), out)
    return {"trace": out.read_text(), "exit": code}
