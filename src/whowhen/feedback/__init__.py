"""Feedback stage: do better attributions make agent systems improve? (AgenTracer §5)

For every originally failed rollout of a (benchmark, system), the task is rerun for R
rounds, once per feedback source: none (plain retry with a new seed), self_critique (the
system re-reads its own attempt), an attributor, or oracle (the gold decisive step, by
counterfactual replay of the failed attempt). Each rerun sees the feedback only as
messages in its history (`whowhen.runtime.feedback`); a solved task is not rerun.
"""

from whowhen.feedback.loop import Context, run_feedback

__all__ = ["Context", "run_feedback"]
