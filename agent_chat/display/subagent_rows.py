"""Child agents (hermes' `delegate_task`) as the thinking panel shows them: one card per
child under its delegate_task call, and MCP tool names as `<tool>` with a `<server>` badge.

A card's tool history is compact (name, label, outcome, time), never a call's arguments or
output: the live cards travel to the page on every change of a child, so they stay small.
Live and replayed runs go through the same functions, so a reload shows the same cards.
"""

from __future__ import annotations

from typing import TypedDict

from agent_chat.display.tool_views import shape
from agent_chat.display.usage import tokens
from agent_chat.protocol.events import RunState
from agent_chat.protocol.views import RunView, Subagent, ToolCall

DELEGATE_TOOL = "delegate_task"
MCP_PREFIX = "mcp__"
GOAL_CHARS = 600  # a card shows the goal's beginning; the model may have written pages
SUMMARY_CHARS = 4_000

# data-status of a card: the words a person reads, not the protocol's state names.
CARD_STATUS = {
    RunState.RUNNING: "running",
    RunState.WAITING_INPUT: "waiting",  # for the person: an approval in its name
    RunState.SUCCEEDED: "completed",
    RunState.FAILED: "failed",
    RunState.STOPPED: "stopped",
}


def mcp_name(tool: str) -> tuple[str, str]:
    """(the tool's own name, its MCP server) for hermes' `mcp__<server>__<tool>`; any other
    name is itself with no server. hermes keeps `__` as the one delimiter (it turns every
    other character outside [A-Za-z0-9_] into `_`), so the server ends at the first `__`."""
    if not tool.startswith(MCP_PREFIX):
        return tool, ""
    server, sep, name = tool[len(MCP_PREFIX) :].partition("__")
    if not sep or not server or not name:
        return tool, ""
    return name, server


LIVE_TOOLS = 3  # the newest calls a live card carries; the finished card has them all


class SubToolRow(TypedDict):
    tool: str  # hermes' name (data-tool)
    name: str  # what the card shows (an MCP tool's own name)
    server: str  # an MCP tool's server ("" otherwise)
    label: str  # the command, the path
    state: str  # running | ok | error
    duration: str


class SubTodoRow(TypedDict):
    content: str
    status: str


class SubagentRow(TypedDict):
    id: str
    goal: str
    status: str  # running | waiting | completed | failed | stopped (the card's data-status)
    line: str  # its live status line
    current: str  # the tool running now ("" when none)
    current_server: str
    current_label: str
    tools: list[SubToolRow]
    earlier: int  # calls made before those in `tools` (a live card shows the newest only)
    todos: list[SubTodoRow]
    summary: str  # its final answer as the parent got it
    error: str
    usage: str  # "1.2K in · 85 out tokens"
    seconds: str  # "41 s" once it ended


class SubLine(TypedDict):
    """What a live card changes most often: its status line, current tool and usage (which
    grows with each model call: in `subagents`, it would resend every goal each turn)."""

    line: str
    current: str
    current_server: str
    current_label: str
    usage: str


class SubTools(TypedDict):
    tools: list[SubToolRow]
    earlier: int


# A live card travels as four vars, each resent only when that part of some child changed
# (a Reflex var is resent whole): the status lines and usage on nearly every update, the calls on a
# call's end, the TODO lists on their updates, the rest when a child starts or ends.
LiveCards = tuple[list[SubagentRow], list[SubLine], list[SubTools], list[list[SubTodoRow]]]


def split_live(rows: list[SubagentRow]) -> LiveCards:
    static, lines, tools, todos = [], [], [], []
    for row in rows:
        lines.append(
            SubLine(
                line=row["line"],
                current=row["current"],
                current_server=row["current_server"],
                current_label=row["current_label"],
                usage=row["usage"],
            )
        )
        tools.append(SubTools(tools=row["tools"], earlier=row["earlier"]))
        todos.append(row["todos"])
        static.append(
            SubagentRow(
                **{
                    **row,
                    "line": "",
                    "current": "",
                    "current_server": "",
                    "current_label": "",
                    "usage": "",
                    "tools": [],
                    "earlier": 0,
                    "todos": [],
                }
            )
        )
    return static, lines, tools, todos


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _duration(call: ToolCall) -> str:
    return f"{call.duration_ms / 1000:.1f} s" if call.duration_ms is not None else ""


def sub_tool_row(call: ToolCall) -> SubToolRow:
    name, server = mcp_name(call.tool)
    return SubToolRow(
        tool=call.tool,
        name=name,
        server=server,
        label=shape(call)["label"],
        state=("error" if call.is_error else "ok") if call.done else "running",
        duration=_duration(call),
    )


def usage_text(usage: dict[str, int]) -> str:
    used_in, used_out = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    if not (used_in or used_out):
        return ""
    return f"{tokens(used_in)} in · {tokens(used_out)} out tokens"


def _seconds(child: Subagent) -> float | None:
    if child.duration_s is not None:
        return child.duration_s
    work = child.work
    if work.started_ts is not None and work.ended_ts is not None:
        return max(work.ended_ts - work.started_ts, 0.0)
    return None


def subagent_row(
    child: Subagent, tools: list[SubToolRow] | None = None, earlier: int = 0
) -> SubagentRow:
    """One card (`tools`: rows of the child's newest finished calls, when the caller keeps
    them, with `earlier` the finished calls before them; the running one is `current`)."""
    current = child.current_tool
    running = current is not None and not current.done and not child.finished
    name, server = mcp_name(current.tool) if running and current else ("", "")
    seconds = _seconds(child) if child.finished else None
    return SubagentRow(
        id=child.subagent_id,
        goal=_cut(child.goal.strip(), GOAL_CHARS),
        status=CARD_STATUS.get(child.state, "running"),
        line="" if child.finished else child.status,
        current=name,
        current_server=server,
        current_label=shape(current)["label"] if running and current else "",
        tools=tools if tools is not None else [sub_tool_row(c) for c in child.tools],
        earlier=earlier,
        todos=[
            SubTodoRow(content=str(t.get("content", "")), status=str(t.get("status", "")))
            for t in child.todos
        ],
        summary=_cut(child.summary, SUMMARY_CHARS) if child.finished else "",
        error=child.error or "",
        usage=usage_text(child.usage),
        seconds="" if seconds is None else f"{seconds:.0f} s",
    )


def children_rows(view: RunView, call_id: str) -> list[SubagentRow]:
    return [subagent_row(child) for child in view.children_of(call_id)]


def fold_line(view: RunView, call_id: str) -> str:
    """'3 subagents · 41 s · 12 tools': one delegate_task call's children, folded. The time
    is the longest child's (they run at once)."""
    children = view.children_of(call_id)
    if not children:
        return ""
    count = len(children)
    parts = [f"{count} subagent{'s' if count != 1 else ''}"]
    times = [s for s in (_seconds(c) for c in children) if s is not None]
    if times:
        parts.append(f"{max(times):.0f} s")
    calls = sum(len(c.tools) for c in children)
    parts.append(f"{calls} tool{'s' if calls != 1 else ''}")
    return " · ".join(parts)
