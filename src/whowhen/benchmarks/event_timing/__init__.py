"""Event timing (video): when balls enter a zone or cross a line in rendered frames;
scripted ReAct and orchestrator policies, their error operators and role prompts."""

from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.event_timing import env, operators, policies, prompts, tasks

SPEC = Benchmark.from_modules(tasks, env, policies, operators, prompts)
