"""Web shop (text, web interaction): buy the right item with the right options on a
simulated site; scripted ReAct, orchestrator, ledger-orchestrator and group-chat policies,
their error operators and role prompts."""

from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.web_shop import env, prompts, systems, tasks

SPEC = Benchmark.from_modules(tasks, env, systems, prompts)
