"""The thinking view's shapes: what `protocol/reducer.py` folds run events into, and what the
thinking panel (and a subagent's card) renders. Frozen: a reducer step makes new ones."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_chat.protocol.events import FINISHED_STATES, RunState


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    tool: str
    args: Any = None
    result: str | None = None
    duration_ms: float | None = None
    is_error: bool = False
    done: bool = False
    progress: str = ""


@dataclass(frozen=True)
class Clarify:
    """A pending pause: a question, or (kind "approval") a command waiting for consent."""

    clarify_id: str
    question: str  # for an approval: the command
    choices: tuple[str, ...] = ()
    kind: str = "clarify"
    description: str = ""  # for an approval: why it is dangerous
    subagent: str = ""  # asked for this child agent (its id); "" for the answer's own agent


@dataclass(frozen=True)
class RunView:
    """Everything the thinking panel and the answer show for one run."""

    answer: str = ""  # the text segment that is (so far) the final answer
    segment: int = 0  # how many text segments moved to ① (the answer restarts each time)
    thinking: str = ""  # ① reasoning and text segments that were followed by tool calls
    status: str = ""  # ② live status
    status_priority: int = -1
    current_tool: ToolCall | None = None  # ③ current
    tools: tuple[ToolCall, ...] = ()  # ③ history
    todos: tuple[dict[str, Any], ...] = ()  # ④
    clarify: Clarify | None = None  # ⑤ pending question
    answers: tuple[tuple[str, str | None], ...] = ()  # (question, answer) of resolved questions
    state: str = RunState.RUNNING  # a RunState
    error: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    steps: int = 0
    compactions: tuple[str, ...] = ()
    steers: tuple[tuple[str, str], ...] = ()  # (text, "sent" | "delivered" | "not delivered")
    started_ts: float | None = None
    ended_ts: float | None = None
    last_seq: int = 0
    model: str = ""
    reconnecting: bool = False  # the app lost its event stream from the bridge for now
    reasoning_open: bool = False  # the last thing in ① is a reasoning stream still going
    # Child agents of delegate_task calls, in the order they started (nested ones too: a
    # child's own delegate_task call makes children whose `parent_subagent` is that child).
    subagents: tuple[Subagent, ...] = ()

    @property
    def finished(self) -> bool:
        return self.state in FINISHED_STATES

    @property
    def todo_counts(self) -> tuple[int, int]:
        """(completed, total) over the non-cancelled items."""
        live = [t for t in self.todos if t.get("status") != "cancelled"]
        return sum(1 for t in live if t.get("status") == "completed"), len(live)

    def subagent(self, subagent_id: str) -> Subagent | None:
        return next((s for s in self.subagents if s.subagent_id == subagent_id), None)

    def children_of(self, call_id: str, parent_subagent: str = "") -> tuple[Subagent, ...]:
        """The children one delegate_task call made: the answer's own call (`parent_subagent`
        "") or a child's (its id), in their task order."""
        found = [
            s
            for s in self.subagents
            if s.parent_call_id == call_id and s.parent_subagent == parent_subagent
        ]
        return tuple(sorted(found, key=lambda s: s.index))


@dataclass(frozen=True)
class Subagent:
    """One child agent of a delegate_task call: everything its card shows. `work` is its own
    view, reduced from its `subagent_*` events by the same handlers as the answer's."""

    subagent_id: str
    parent_call_id: str  # the delegate_task call that made it
    parent_subagent: str = ""  # the child that made it; "" for the answer's own agent
    goal: str = ""
    toolsets: tuple[str, ...] = ()
    model: str = ""
    index: int = 0  # its task's place in the delegate_task call
    work: RunView = field(default_factory=RunView)
    summary: str = ""  # its final answer, as hermes hands it to the parent (cut)
    cost_usd: float | None = None  # hermes' estimate, when it has prices for the model
    duration_s: float | None = None

    @property
    def state(self) -> str:
        return self.work.state

    @property
    def finished(self) -> bool:
        return self.work.finished

    @property
    def status(self) -> str:
        return self.work.status

    @property
    def current_tool(self) -> ToolCall | None:
        return self.work.current_tool

    @property
    def tools(self) -> tuple[ToolCall, ...]:
        return self.work.tools

    @property
    def todos(self) -> tuple[dict[str, Any], ...]:
        return self.work.todos

    @property
    def todo_counts(self) -> tuple[int, int]:
        return self.work.todo_counts

    @property
    def thinking(self) -> str:
        return self.work.thinking

    @property
    def text(self) -> str:
        """What it is writing (its last text segment; earlier ones moved to `thinking`)."""
        return self.work.answer

    @property
    def usage(self) -> dict[str, int]:
        return self.work.usage

    @property
    def error(self) -> str | None:
        return self.work.error
