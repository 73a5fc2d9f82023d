"""Document QA (text, multi-hop research): questions answered by reading a generated
corpus with `search` and `read`; scripted ReAct, orchestrator and ledger-orchestrator
policies, their error operators and role prompts."""

from whowhen.benchmarks.base import Benchmark
from whowhen.benchmarks.doc_qa import env, prompts, systems, tasks

SPEC = Benchmark.from_modules(tasks, env, systems, prompts)
