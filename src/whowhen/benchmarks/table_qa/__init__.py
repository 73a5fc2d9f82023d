"""Table QA (text, data science): questions over a generated sales table, answered with
read-only SQL or with programs over the table's CSV file; scripted ReAct, solver + verifier
and expert group chat policies, their error operators and role prompts."""

from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.table_qa import env, prompts, systems, tasks

SPEC = Benchmark.from_modules(tasks, env, systems, prompts)
