"""HumanEval (text, coding): the real 164 problems, solved by writing code and running
the docstring examples, scored by the hidden tests in the sandbox; scripted code-act,
coder -> tester -> reviewer pipeline and expert group chat policies, their error operators
and role prompts."""

from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.humaneval import env, prompts, systems, tasks

SPEC = Benchmark.from_modules(tasks, env, systems, prompts)
