"""Table QA (text, data science): questions over a generated sales table, answered with
read-only SQL; scripted ReAct and solver + verifier policies, their error operators and
role prompts."""

from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.table_qa import env, operators, policies, prompts, tasks

SPEC = Benchmark.from_modules(tasks, env, policies, operators, prompts)
