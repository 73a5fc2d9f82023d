"""Visual counting (image): count shapes of a colour in rendered scenes with
`detect_objects`; a scripted ReAct policy, its error operators and role prompt."""

from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.visual_count import env, operators, policies, prompts, tasks

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
