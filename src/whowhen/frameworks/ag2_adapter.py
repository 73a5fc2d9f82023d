"""AG2 (`pip install -e '.[ag2]'`, the classic `autogen` API that Who&When's
Algorithm-Generated runs came from): group chats playing `solver_verifier` and
`expert_chat`.

Model-backed `ConversableAgent`s (their role prompts as system messages, the benchmark's
tools offered natively), a `UserProxyAgent` that runs every tool call in the environment
and says nothing else, and a `GroupChatManager` that picks speakers with the built-in
system's turn-taking rule, so the framework's order is the one the system's operators and
the stand-in know. The chat ends once `final_answer` has run.

- `ag2_solver_verifier`: `solver` and `verifier`, the executor `executor`; after a tool
  call its result, then the same agent; a solver's message goes to the verifier and back
  (`agents.team.speaker`).
- `ag2_expert_chat`: the benchmark's experts (on arithmetic: Arithmetic_Expert,
  Python_Expert, Verification_Expert), the executor named `Computer_terminal` as in
  CaptainAgent's chats, running the programs the experts call it with; the speaker rule is
  the benchmark's group chat's own (`ScriptedExpertChat.speaker`: who reads a program's
  output, who checks a proposal).
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
from collections.abc import Iterator
from typing import Any

from whowhen.agents.team import speaker
from whowhen.frameworks.base import FrameworkTask, NativeToolCalls
from whowhen.gateway.server import MODEL
from whowhen.registry import get_benchmark
from whowhen.runtime.feedback import split_feedback
from whowhen.tools import TERMINAL

EXECUTOR = "executor"


class AG2GroupChat(NativeToolCalls):
    """An AG2 group chat of model-backed agents, a tool executor and a manager whose
    speaker rule is `next_speaker(history)`."""

    system = ""
    plays = ""
    agents: tuple[str, ...] = ()
    executor = EXECUTOR
    volatile: tuple[str, ...] = ()

    def next_speaker(self, history: list[Any]) -> str:
        raise NotImplementedError

    def run(self, task: FrameworkTask) -> None:
        from autogen import (  # deferred: an optional extra
            ConversableAgent,
            GroupChat,
            GroupChatManager,
            UserProxyAgent,
        )

        def llm(agent: str) -> dict[str, Any]:
            entry = {"model": MODEL, "base_url": task.base_url(agent),
                     "api_key": "whowhen-gateway", "price": [0, 0]}  # fmt: skip
            return {"config_list": [entry], "cache_seed": None}

        models = {
            name: ConversableAgent(
                name,
                system_message=task.prompts[name],
                llm_config=llm(name),
                human_input_mode="NEVER",
            )
            for name in self.agents
        }
        executor = UserProxyAgent(
            self.executor, human_input_mode="NEVER", code_execution_config=False,
            llm_config=False,
        )  # fmt: skip
        for spec in task.tools:
            for agent in models.values():
                agent.update_tool_signature({"type": "function", "function": spec}, is_remove=False)
            executor.register_function({spec["name"]: _runner(task, spec["name"])})

        def select(last: Any, chat: Any) -> Any:
            if chat.messages and chat.messages[-1].get("tool_calls"):
                return executor
            return models[self.next_speaker(task.history())]

        chat = GroupChat([*models.values(), executor], messages=[],
                         max_round=2 * task.max_turns, speaker_selection_method=select)  # fmt: skip
        manager = GroupChatManager(chat, llm_config=False,
                                   is_termination_msg=lambda _: task.done())  # fmt: skip
        with _quiet():  # AG2 prints every turn
            executor.initiate_chat(manager, message=task.text, silent=True)


class AG2SolverVerifier(AG2GroupChat):
    """`ag2_solver_verifier`: an AG2 group chat of solver, verifier and a tool executor."""

    system = "ag2_solver_verifier"
    plays = "solver_verifier"
    agents = ("solver", "verifier")

    def next_speaker(self, history: list[Any]) -> str:
        return speaker(self.plays, self.agents, history)


class AG2ExpertChat(AG2GroupChat):
    """`ag2_expert_chat`: the benchmark's experts and the `Computer_terminal` in an AG2
    group chat, speaking in the order of the benchmark's scripted group chat."""

    system = "ag2_expert_chat"
    plays = "expert_chat"
    executor = TERMINAL

    def __init__(self, benchmark: str = "arithmetic") -> None:
        self.rule = get_benchmark(benchmark).policies[self.plays]()
        self.agents = tuple(self.rule.agents)

    def next_speaker(self, history: list[Any]) -> str:
        return self.rule.speaker(split_feedback(history)[0])


class _Quiet:
    """stdout discarded while any AG2 run is going: `redirect_stdout` per run would not do,
    as runs go side by side in threads and each would restore another's sink."""

    def __init__(self) -> None:
        self.lock, self.runs, self.saved = threading.Lock(), 0, sys.stdout

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self.lock:
            if self.runs == 0:
                self.saved, sys.stdout = sys.stdout, io.StringIO()
            self.runs += 1
        try:
            yield
        finally:
            with self.lock:
                self.runs -= 1
                if self.runs == 0:
                    sys.stdout = self.saved


_quiet = _Quiet()


def _runner(task: FrameworkTask, name: str) -> Any:
    def run(**kwargs: Any) -> str:
        return task.call_tool(name, kwargs)

    run.__name__ = name
    return run
