"""Multi-step arithmetic word problems (text, STEM): a calculator environment, scripted
ReAct, code-as-action and solver + verifier policies, their error operators and role
prompts."""

from whowhen.benchmarks.arithmetic import env, operators, policies, prompts, tasks
from whowhen.benchmarks.base import Benchmark

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
