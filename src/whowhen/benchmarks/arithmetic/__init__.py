"""Multi-step arithmetic word problems (text, STEM): a calculator environment, scripted
ReAct, code-as-action and solver + verifier policies, their error operators and role
prompts."""

from whowhen.benchmarks.arithmetic import env, operators, policies, prompts, tasks
from whowhen.benchmarks.base import Benchmark

SPEC = Benchmark.from_modules(tasks, env, policies, operators, prompts)
