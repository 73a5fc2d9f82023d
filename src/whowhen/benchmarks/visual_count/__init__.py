"""Visual counting (image): count shapes of a colour in rendered scenes with
`detect_objects`; a scripted ReAct policy, its error operators and role prompt."""

from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.visual_count import env, operators, policies, prompts, tasks

SPEC = Benchmark.from_modules(tasks, env, policies, operators, prompts)
