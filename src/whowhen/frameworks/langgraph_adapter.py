"""LangGraph (`pip install -e '.[langgraph]'`): a state graph playing a built-in system, one
node per agent and one for the tools.

Each agent node asks its own `ChatOpenAI` (pointed at the gateway, the benchmark's tools
bound natively) with its role prompt and the shared message list; its answer carries the
agent's name, so every model sees who said what. Edges: an answer with tool calls goes
to the tools node, which runs them in the environment; everything else goes where the
built-in system's turn-taking rule (`agents.team.speaker`) says, and the graph ends once
`final_answer` has run. One class plays `react` (one agent) and `solver_verifier` (two).
"""

from __future__ import annotations

from typing import Any

from whowhen.agents.team import speaker
from whowhen.frameworks.base import FrameworkTask, NativeToolCalls
from whowhen.gateway.server import MODEL

TOOLS = "tools"


class LangGraphTeam(NativeToolCalls):
    """`langgraph_<system>`: a LangGraph state graph of the system's agents."""

    volatile: tuple[str, ...] = ()

    def __init__(self, plays: str, agents: tuple[str, ...]) -> None:
        self.plays, self.agents = plays, agents
        self.system = f"langgraph_{plays}"

    def run(self, task: FrameworkTask) -> None:
        from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
        from langchain_openai import ChatOpenAI  # deferred: optional extras
        from langgraph.graph import END, START, MessagesState, StateGraph

        bound = [{"type": "function", "function": spec} for spec in task.tools]

        def agent_node(name: str) -> Any:
            chat = ChatOpenAI(
                model=MODEL, base_url=task.base_url(name), api_key="whowhen-gateway", max_retries=0
            )
            llm = chat.bind_tools(bound)

            def node(state: Any) -> dict[str, Any]:
                reply = llm.invoke([SystemMessage(task.prompts[name]), *state["messages"]])
                reply.name = name
                return {"messages": [reply]}

            return node

        def tools_node(state: Any) -> dict[str, Any]:
            calls = state["messages"][-1].tool_calls
            return {
                "messages": [
                    ToolMessage(
                        task.call_tool(c["name"], c["args"]), tool_call_id=c["id"], name=c["name"]
                    )
                    for c in calls
                ]
            }

        def next_speaker(state: Any) -> str:
            last = state["messages"][-1]
            if getattr(last, "tool_calls", None):
                return TOOLS
            return END if task.done() else speaker(self.plays, self.agents, task.history())

        graph = StateGraph(MessagesState)
        for name in self.agents:
            graph.add_node(name, agent_node(name))
            graph.add_conditional_edges(name, next_speaker)
        graph.add_node(TOOLS, tools_node)
        graph.add_conditional_edges(TOOLS, next_speaker)
        graph.add_edge(START, self.agents[0])
        graph.compile().invoke(
            {"messages": [HumanMessage(task.text)]},
            {"recursion_limit": 2 * task.max_turns + 2},
        )
