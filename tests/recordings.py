"""Gateway recordings for the command-line tests, written through the recorder's own
writers as `whowhen record` leaves them: a planner/solver run, its calls and its outcome."""

from __future__ import annotations

from pathlib import Path

from whowhen.gateway.exchange import Exchange
from whowhen.gateway.recording import Recorder, record_path, write_outcome


def write_recording(folder: Path, run_id: str, task: str, answer: str, success: bool) -> Path:
    """Run `run_id` in `folder`: the planner passes `task` on, the solver answers `answer`."""
    folder.mkdir(parents=True, exist_ok=True)
    record = Recorder(record_path(folder, run_id))
    for index, (agent, reply) in enumerate((("planner", task), ("solver", answer))):
        system = {"role": "system", "content": f"You are the {agent} agent."}
        request = {"messages": [system, {"role": "user", "content": task}]}
        message = {"role": "assistant", "content": reply}
        record(Exchange(index, agent, request, message, "live", 10, 2, 0.0))
    write_outcome(
        folder,
        run_id,
        {"run_id": run_id, "success": success, "outcome": "success" if success else "failure",
         "reason": "answer checked", "command": ["python", "agent.py"]},
    )  # fmt: skip
    return folder
