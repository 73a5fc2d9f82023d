"""Web shop (text, web interaction): buy the right item with the right options on a
simulated site; scripted ReAct and orchestrator policies, their error operators and role
prompts."""

from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.web_shop import env, operators, policies, prompts, tasks

SPEC = Benchmark.from_modules(tasks, env, policies, operators, prompts)
