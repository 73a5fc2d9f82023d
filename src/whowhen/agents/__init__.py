"""Agent-system registry: (system name, benchmark) -> a policy object."""

from __future__ import annotations

from whowhen.agents.arithmetic import ReactSystem, Slip, SolverVerifierSystem
from whowhen.errors import WhowhenError
from whowhen.runtime import AgentSystem

SYSTEMS: dict[str, dict[str, type]] = {
    "react": {"arithmetic": ReactSystem},
    "solver_verifier": {"arithmetic": SolverVerifierSystem},
}


def make_system(
    name: str, benchmark: str, slip_rate: float = 0.0, seed: int = 0, slip: Slip | None = None
) -> AgentSystem:
    """The scripted reference policy of `name` for `benchmark` (slip_rate 0 = never errs)."""
    if name not in SYSTEMS:
        raise WhowhenError(f"unknown system {name!r}; known: {', '.join(SYSTEMS)}", field="systems")
    if benchmark not in SYSTEMS[name]:
        raise WhowhenError(
            f"system {name!r} has no policy for benchmark {benchmark!r}", field="systems"
        )
    return SYSTEMS[name][benchmark](slip_rate=slip_rate, seed=seed, slip=slip)
