"""Document QA (text, multi-hop research): questions answered by reading a generated
corpus with `search` and `read`; scripted ReAct and orchestrator policies, their error
operators and role prompts."""

from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.doc_qa import env, operators, policies, prompts, tasks

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
