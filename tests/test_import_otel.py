"""OpenTelemetry traces in: a real two-agent run, instrumented by OpenInference's or the
official GenAI OpenAI instrumentation, exported as OTLP JSON, imported, and the steps
compared with what the agents did; then attributed, scored, shown, reviewed and viewed
like any dataset. Bad spans and files are one line each, the rest imported."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import polars as pl
import pytest
import yaml

from whowhen.cli import main
from whowhen.imports.otel import OtelOptions, build_run, import_otel, load_outcomes
from whowhen.imports.otlp import Span
from whowhen.schema import PREDICTIONS, read_table

from .conftest import ROOT
from .otel_fixtures import smolagents_run, two_agent_run

CONVENTIONS = ("openinference", "genai", "openllmetry")


def _steps(result) -> list[tuple]:
    steps = result.tables()["steps"].sort("step")
    return [
        (
            s["actor"],
            s["kind"],
            s["content"],
            s["tool"],
            json.loads(s["tool_args"]) if s["tool_args"] else None,
        )
        for s in steps.iter_rows(named=True)
    ]


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("tool_spans", [True, False], ids=["tool spans", "no tool spans"])
def test_the_imported_steps_are_what_the_agents_did(
    convention: str, tool_spans: bool, tmp_path: Path
) -> None:
    did = two_agent_run(convention, tmp_path / "traces" / "run.json", tool_spans=tool_spans)
    result = import_otel(tmp_path / "traces")
    assert result.errors == []
    assert _steps(result) == did  # actors, kinds, texts, tool calls, observations, order
    run = result.tables()["runs"].row(0, named=True)
    assert run["question"] == "Add 2 and 3." and run["final_answer"] == "Final answer: 5"
    assert run["topology"] == "multi" and run["n_steps"] == len(did)
    assert run["tokens_in"] > 0 and run["tokens_out"] > 0  # usage from the model spans
    assert len(run["run_id"]) == 32  # the trace id, as the user's tracing UI shows it


def test_a_real_frameworks_trace_imports_as_its_memory_says(tmp_path: Path) -> None:
    """smolagents traced by OpenInference's smolagents instrumentation (agent, chain, LLM
    and tool spans; tool spans without call ids; the tool's schema in `tool.parameters`):
    the steps are the agent's own memory, the task first (the `final_answer` call's
    result is the answer handed back, no observation)."""
    pytest.importorskip("smolagents")
    pytest.importorskip("openinference.instrumentation.smolagents")
    task, did = smolagents_run(tmp_path / "t" / "run.json")
    result = import_otel(tmp_path / "t")
    assert result.errors == []
    steps = _steps(result)
    assert steps[0][:2] == ("user", "message") and steps[0][2].endswith(task)
    assert steps[1:] == did  # the calls with their arguments, each observation after it
    assert len(did) == 3


def test_success_from_an_attribute_or_an_outcomes_file(tmp_path: Path) -> None:
    two_agent_run("openinference", tmp_path / "t" / "ok.jsonl", success=True)
    two_agent_run("openinference", tmp_path / "t" / "failed.jsonl", success=False)
    runs = import_otel(tmp_path / "t", OtelOptions(success_attribute="app.success")).tables()[
        "runs"
    ]
    assert sorted(runs["success"].to_list()) == [False, True]
    unknown = import_otel(tmp_path / "t").tables()["runs"]
    assert not unknown["success"].any()
    assert all("unknown" in json.loads(m)["success_from"] for m in unknown["meta"])
    ids = runs["run_id"].to_list()
    outcomes = tmp_path / "outcomes.csv"
    outcomes.write_text(f"trace_id,success\n{ids[0]},true\n{ids[1]},false\n")
    assert load_outcomes(outcomes) == {ids[0]: True, ids[1]: False}
    one_row = tmp_path / "outcomes.jsonl"  # one JSONL row is a row, not a {trace: success} map
    one_row.write_text(json.dumps({"trace_id": ids[0], "success": "ok"}) + "\n")
    assert load_outcomes(one_row) == {ids[0]: True}
    by_file = import_otel(tmp_path / "t", OtelOptions(outcomes=load_outcomes(outcomes)))
    assert by_file.tables()["runs"].sort("run_id")["success"].to_list() == [
        ids[0] < ids[1],
        ids[0] > ids[1],
    ]


def test_bad_spans_and_files_are_one_line_each_and_the_rest_imports(tmp_path: Path) -> None:
    good = two_agent_run("genai", tmp_path / "t" / "good.json")
    request = json.loads((tmp_path / "t" / "good.json").read_text())
    spans = request["resourceSpans"][0]["scopeSpans"]
    broken = json.loads(json.dumps(request))
    first = broken["resourceSpans"][0]["scopeSpans"][0]["spans"]
    first[0]["spanId"] = "not-an-id!"
    for span in (s for ss in broken["resourceSpans"][0]["scopeSpans"] for s in ss["spans"]):
        span["traceId"] = "ab" * 16
        for kv in span.get("attributes", []):
            if kv["key"] == "gen_ai.output.messages":
                kv["value"] = {"stringValue": "{truncated"}
    (tmp_path / "t" / "broken.json").write_text(json.dumps(broken))
    (tmp_path / "t" / "other.json").write_text(json.dumps({"not": "otlp"}))
    (tmp_path / "t" / "lines.jsonl").write_text('{"resourceSpans": []}\n{oops\n')
    assert spans
    result = import_otel(tmp_path / "t")
    text = "\n".join(result.errors)
    assert "broken.json: record span not-an-id!" in text  # file and span named
    assert "gen_ai.output.messages is not JSON" in text and "record span" in text
    assert "other.json: not an OTLP trace export" in text
    assert "lines.jsonl: line 2: bad JSON" in text
    assert "Traceback" not in text
    runs = result.tables()["runs"]
    good_id = next(r for r in runs["run_id"] if r != "ab" * 16)
    steps = result.tables()["steps"].filter(pl.col("run_id") == good_id)
    assert steps.height == len(good)  # the good trace, whole


def test_an_import_is_attributed_scored_shown_reviewed_and_labelled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two_agent_run("openinference", tmp_path / "t" / "run.json")
    data = tmp_path / "ds"
    assert main(["import", "otel", str(tmp_path / "t"), "-o", str(data)]) == 0
    runs = pl.read_parquet(data / "runs.parquet")
    run_id = runs["run_id"][0]
    assert main(["attribute", str(data), "--attributor", "error_signal"]) == 0
    preds = read_table(data / "predictions" / "error_signal.parquet", PREDICTIONS)
    assert preds["agent"][0] in ("researcher", "writer")  # an agent, never the tool
    assert main(["show", run_id[:8], "--data", str(data)]) == 0
    shown = capsys.readouterr().out
    assert "[  1] researcher (action)" in shown and "[  2] add (observation)" in shown
    # no labels came with the traces: the review sheet asks for them ...
    sheet = tmp_path / "sheet.csv"
    assert main(["review", "export", str(data), "-o", str(sheet)]) == 0
    assert "fill labelled_agent and labelled_step" in capsys.readouterr().out
    rows = list(csv.DictReader(sheet.open()))
    assert [r["item_id"] for r in rows] == [run_id] and rows[0]["labelled_agent"] == ""
    rows[0] |= {"labelled_agent": "researcher", "labelled_step": "3"}
    with sheet.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    # ... and the filled sheet labels the runs on import, for scoring
    labelled = tmp_path / "labelled"
    argv = ["import", "otel", str(tmp_path / "t"), "-o", str(labelled), "--labels", str(sheet)]
    assert main(argv) == 0
    assert "1 labelled from" in capsys.readouterr().out
    assert main(["attribute", str(labelled), "--attributor", "last_agent_step"]) == 0
    assert main(["score", str(labelled)]) == 0
    assert "last_agent_step" in capsys.readouterr().out
    from whowhen.analysis.viewer import write_viewer

    tables = {n: pl.read_parquet(labelled / f"{n}.parquet") for n in ("runs", "steps", "labels")}
    pages = write_viewer(
        tables["runs"], tables["steps"], tables["labels"], preds, tmp_path / "viewer"
    )
    assert any("researcher" in p.read_text() for p in pages if p.name != "index.html")
    # an unlabelled run still gets its page: the prediction shown, no verdict, no gold step
    unlabelled = {n: pl.read_parquet(data / f"{n}.parquet") for n in ("runs", "steps", "labels")}
    pages = write_viewer(
        unlabelled["runs"], unlabelled["steps"], unlabelled["labels"], preds, tmp_path / "v2"
    )
    page = pages[0].read_text()
    assert "Not labelled" in page and "jump to gold step" not in page
    assert "0 labelled of 1" in pages[-1].read_text()


def test_a_labels_file_names_its_bad_rows(tmp_path: Path, capsys) -> None:
    two_agent_run("genai", tmp_path / "t" / "run.json")
    run_id = import_otel(tmp_path / "t").tables()["runs"]["run_id"][0]
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "\n".join(
            json.dumps(r)
            for r in (
                {"trace_id": run_id, "agent": "researcher", "step": 1, "mode": "wrong_tool"},
                {"run_id": "feed" * 8, "agent": "x", "step": 1},
                {"run_id": run_id, "agent": "writer", "step": 5},
                {"run_id": run_id, "agent": "add", "step": 99},
            )
        )
    )
    data = tmp_path / "ds"
    argv = ["import", "otel", str(tmp_path / "t"), "-o", str(data), "--labels", str(labels)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert f"{labels}: record 2: field 'run_id'" in err and "not in the import" in err
    assert "record 3: field 'run_id'" in err and "labelled twice" in err
    label = pl.read_parquet(data / "labels.parquet").row(0, named=True)
    assert (label["decisive_agent"], label["decisive_step"], label["mode"]) == (
        "researcher",
        1,
        "wrong_tool",
    )


def test_a_config_import_of_traces_with_labels(tmp_path: Path) -> None:
    """`imports: [{format: otel, labels: ...}]`: the pipeline's import stage reads traces
    and joins their labels as the CLI does."""
    from whowhen.config import validate_config
    from whowhen.imports.stage import import_dataset

    two_agent_run("genai", tmp_path / "t" / "run.json", success=False)
    run_id = import_otel(tmp_path / "t").tables()["runs"]["run_id"][0]
    (tmp_path / "labels.csv").write_text(f"run_id,agent,step\n{run_id},researcher,1\n")
    spec = {
        "name": "mine",
        "format": "otel",
        "path": "t",
        "labels": "labels.csv",
        "success_attribute": "app.success",
    }
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    validate_config(config | {"imports": [spec]})  # the schema knows the otel keys
    result = import_dataset(spec, root=tmp_path)
    assert result.errors == []
    tables = result.tables()
    assert tables["labels"]["decisive_step"].to_list() == [1]
    assert tables["runs"]["success"].to_list() == [False]


def test_the_indexed_genai_form_of_older_openllmetry() -> None:
    """Older OpenLLMetry releases spread messages over indexed keys; today's write the
    GenAI JSON form (tested above with the real instrumentation). This span's attributes
    are copied from such a release's output."""
    from whowhen.imports.otel_messages import model_messages
    from whowhen.imports.otlp import Span

    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "You are the researcher.",
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": "Add 2 and 3.",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "I will add them.",
        "gen_ai.completion.0.tool_calls.0.id": "call_0",
        "gen_ai.completion.0.tool_calls.0.name": "add",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"a": 2, "b": 3}',
    }
    span = Span("ab" * 16, "cd" * 8, None, "openai.chat", 1, 2, attrs)
    inputs, outputs = model_messages(span)
    assert [(m.role, m.content) for m in inputs] == [
        ("system", "You are the researcher."),
        ("user", "Add 2 and 3."),
    ]
    (out,) = outputs
    assert out.content == "I will add them."
    assert [(c.id, c.name, c.arguments) for c in out.tool_calls] == [
        ("call_0", "add", '{"a": 2, "b": 3}')
    ]


# --- what is new in a model call: by position, per agent; tool results consumed once ------


def _genai_span(k: int, inputs: list[tuple[str, str]], output: dict, **attrs: str) -> Span:
    """A GenAI model span, the k-th of its trace: (role, text) in, one message out."""
    messages = [{"role": r, "parts": [{"type": "text", "content": t}]} for r, t in inputs]
    return Span(
        "ab" * 16,
        f"{k + 1:016x}",
        None,
        "chat m",
        2 * k,
        2 * k + 1,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(messages),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", **output}]),
            **attrs,
        },
    )


def _text(content: str) -> dict:
    return {"parts": [{"type": "text", "content": content}]}


def _call(call_id: str, name: str, arguments: dict) -> dict:
    part = {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
    return {"parts": [part]}


def _rebuilt(*spans: Span) -> list[tuple]:
    errors: list[str] = []
    _, steps = build_run("ab" * 16, list(spans), OtelOptions(), errors)
    assert errors == []
    return [(s["actor"], s["kind"], s["content"], s["tool"]) for s in steps]


def test_a_message_sent_twice_is_a_step_each_time() -> None:
    """A framework that cannot parse its agent's answer sends the same error again on the
    next turn: both were really sent, both are steps."""
    task, error = "Add 2 and 3.", "Error: no tool call could be parsed. Call a tool."
    history = [("system", "Answer with a tool call."), ("user", task)]
    agent = {"gen_ai.agent.name": "solver"}
    once = [*history, ("assistant", "It is 5."), ("user", error)]
    twice = [*once, ("assistant", "It is 5."), ("user", error)]
    steps = _rebuilt(
        _genai_span(0, history, _text("It is 5."), **agent),
        _genai_span(1, once, _text("It is 5."), **agent),
        _genai_span(2, twice, _text("5"), **agent),
    )
    assert [s[2] for s in steps] == [task, "It is 5.", error, "It is 5.", error, "5"]
    assert [s[0] for s in steps][1::2] == ["solver"] * 3


def test_a_tool_result_shown_by_its_span_is_consumed_once() -> None:
    """A tool span's result is not repeated when the next call carries it; a later call's
    result with the same text and call id (a server may number each answer's calls from
    0), which no tool span showed, is still a step."""
    adder = {"gen_ai.agent.name": "adder"}
    history = [("system", "Add."), ("user", "Add 2 and 3, twice.")]
    first = _genai_span(0, history, _call("call_0", "add", {"a": 2, "b": 3}), **adder)
    tool = Span("ab" * 16, "f" * 16, None, "execute_tool add", 1, 1, {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": "call_0", "gen_ai.tool.call.result": "5"})  # fmt: skip
    second = _genai_span(1, history, _call("call_0", "add", {"a": 3, "b": 2}), **adder)
    carried = [*json.loads(second.attributes["gen_ai.input.messages"]), _result("call_0", "5")]
    second.attributes["gen_ai.input.messages"] = json.dumps(carried)
    third = _genai_span(2, [], _text("5 both times"), **adder)
    carried += [{"role": "assistant", "parts": []}, _result("call_0", "5")]
    third.attributes["gen_ai.input.messages"] = json.dumps(carried)
    assert _rebuilt(first, tool, second, third) == [
        ("user", "message", "Add 2 and 3, twice.", None),
        ("adder", "action", "", "add"),
        ("add", "observation", "5", None),
        ("adder", "action", "", "add"),
        ("add", "observation", "5", None),
        ("adder", "message", "5 both times", None),
    ]


def _result(call_id: str, text: str) -> dict:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id,
                                       "response": text}]}  # fmt: skip


def test_smolagents_tool_responses_are_observations_of_the_tool_called() -> None:
    """OpenInference's smolagents instrumentation records smolagents' own roles: the call
    as `tool-call` text, the result as `tool-response` "Observation: ...". With no tool
    span (a managed agent is called without one) the result is that tool's observation."""
    agent = Span("ab" * 16, "a" * 16, None, "manager.run", 0, 9,
                 {"openinference.span.kind": "AGENT"})  # fmt: skip

    def llm(k: int, roles_texts: list[tuple[str, str]], out: dict[str, str]) -> Span:
        attrs = {"openinference.span.kind": "LLM"}
        for i, (role, text) in enumerate(roles_texts):
            attrs[f"llm.input_messages.{i}.message.role"] = role
            attrs[f"llm.input_messages.{i}.message.contents.0.message_content.text"] = text
        for key, value in out.items():
            attrs[f"llm.output_messages.0.message.{key}"] = value
        return Span("ab" * 16, f"{k + 1:016x}", "a" * 16, "OpenAIModel.generate", k, k, attrs)

    history = [("system", "You are the manager agent."), ("user", "New task:\nMultiply 6 by 7.")]
    calls = {
        "role": "assistant",
        "tool_calls.0.tool_call.id": "call_0",
        "tool_calls.0.tool_call.function.name": "calculator",
        "tool_calls.0.tool_call.function.arguments": '{"task": "Multiply 6 by 7."}',
    }
    answered = [*history, ("tool-call", "Calling tools:\n[...]"),
                ("tool-response", "Observation:\n42")]  # fmt: skip
    steps = _rebuilt(agent, llm(1, history, calls), llm(2, answered, {"content": "42"}))
    assert steps == [
        ("user", "message", "New task:\nMultiply 6 by 7.", None),
        ("manager", "action", "", "calculator"),
        ("calculator", "observation", "42", None),
        ("manager", "message", "42", None),
    ]


def test_agents_without_agent_spans_are_named_as_the_gateway_names_them() -> None:
    """No agent span: an agent is named by the role its system prompt declares, the
    gateway's rule, so a program traced or recorded gets the same agent names; a role
    written as a str-enum's repr (`MessageRole.USER`) is read as its value."""
    planner = _genai_span(0, [("MessageRole.SYSTEM", "You are the planner agent."),
                              ("MessageRole.USER", "9 * 9")], _text("9 * 9"))  # fmt: skip
    solver = _genai_span(1, [("system", "You are the solver agent."), ("user", "9 * 9")],
                         _text("81"))  # fmt: skip
    assert _rebuilt(planner, solver) == [
        ("user", "message", "9 * 9", None),
        ("planner", "message", "9 * 9", None),
        ("user", "message", "9 * 9", None),
        ("solver", "message", "81", None),
    ]
