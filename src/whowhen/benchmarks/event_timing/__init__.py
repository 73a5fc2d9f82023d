"""Event timing (video): when balls enter a zone or cross a line in rendered frames;
scripted ReAct and orchestrator policies, their error operators and role prompts."""

from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.event_timing import env, operators, policies, prompts, tasks

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
