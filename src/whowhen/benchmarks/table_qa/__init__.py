"""Table QA (text, data science): questions over a generated sales table, answered with
read-only SQL; scripted ReAct and solver + verifier policies, their error operators and
role prompts."""

from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.table_qa import env, operators, policies, prompts, tasks

SPEC = Benchmark(
    tasks.BENCHMARK,
    tasks.MODALITY,
    tasks.CATEGORY,
    tasks.make_tasks,
    env.Env,
    env.TOOL_SPECS,
    policies.POLICIES,
    operators.OPERATORS,
    prompts.PROMPTS,
)
