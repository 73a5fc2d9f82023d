"""Chart QA (image): questions about rendered bar charts, read from the PNG's pixels;
scripted ReAct and orchestrator policies, their error operators and role prompts."""

from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.chart_qa import env, operators, policies, prompts, tasks

SPEC = Benchmark.from_modules(tasks, env, policies, operators, prompts)
