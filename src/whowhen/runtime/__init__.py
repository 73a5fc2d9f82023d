"""Agent runtime: run episodes, record them, and warm-start from a recorded prefix."""

from whowhen.runtime.episode import Episode, continue_episode, run_episode
from whowhen.runtime.interfaces import AgentSystem, Environment, Verdict
from whowhen.runtime.types import Action, Step
from whowhen.runtime.warm_start import PrefixFidelity, WarmStartResult, warm_start

__all__ = [
    "Action",
    "AgentSystem",
    "Environment",
    "Episode",
    "PrefixFidelity",
    "Step",
    "Verdict",
    "WarmStartResult",
    "continue_episode",
    "run_episode",
    "warm_start",
]
