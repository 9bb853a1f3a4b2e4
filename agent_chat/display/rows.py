"""Row shapes the browser receives (TypedDicts), built from store objects.

Only what the page shows goes here: never an API key.
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

from agent_chat import routes
from agent_chat.db.attachment_models import IMAGE_TYPES, Attachment
from agent_chat.db.attachment_notes import human_size
from agent_chat.db.logs import RunStats
from agent_chat.db.models import ChatMessage, ChatSession, ModelConfig
from agent_chat.display.streams import final_stream_id
from agent_chat.display.subagent_rows import (
    DELEGATE_TOOL,
    SubagentRow,
    children_rows,
    fold_line,
    mcp_name,
)
from agent_chat.display.tool_views import GENERIC, ShapeCache, ToolView, shape
from agent_chat.protocol.reducer import RunView, ToolCall
from agent_chat.skills import Skill


class SessionRow(TypedDict):
    uuid: str
    title: str
    state: str  # "" | "running" | "waiting" | "unread"
    archived: bool
    pinned: bool
    folder_id: int  # 0: in no folder
    scheduled: bool  # a schedule made it or adds to it


class FolderRow(TypedDict):
    id: int
    name: str
    collapsed: bool
    count: int  # its conversations (pinned ones show under "Pinned" only)
    sessions: list[SessionRow]  # the newest of them when open (db/folders.py:FOLDER_PAGE)


class SegmentRow(TypedDict):
    text: str
    mark: bool  # shown in <mark> (a matched word of a search)


class SearchHitRow(TypedDict):
    uuid: str
    message_id: int  # 0: the title matched
    title: list[SegmentRow]
    snippet: list[SegmentRow]
    date: str
    archived: bool


class ToolRow(TypedDict):
    call_id: str
    tool: str
    args: str  # pretty JSON ("" in panel rows whose view shows the call)
    result: str
    duration: str  # "0.4 s", "" while running
    is_error: bool
    done: bool
    progress: str
    view: ToolView  # the call shown as what it is (live/tool_views.py)
    name: str  # what the panel shows: an MCP tool's own name (`tool` stays hermes')
    server: str  # an MCP tool's server, shown as a badge ("" otherwise)
    children: list[SubagentRow]  # a delegate_task call's child agents (display/subagent_rows)
    fold: str  # their one line: "3 subagents · 41 s · 12 tools"


class TodoRow(TypedDict):
    id: str
    content: str
    status: str  # pending | in_progress | completed | cancelled


class AnswerRow(TypedDict):
    question: str
    answer: str


class FileRow(TypedDict):
    """A file a message carries: a picture (a thumbnail) or a card, both a download."""

    id: int
    name: str
    size: str  # "1.2 kB"
    kind: str  # what the card says instead of a picture: "CSV", "PDF", "TXT" …
    image: bool
    url: str  # the download (and the full picture)
    thumb: str  # a picture's small version, made on the server ("" for other files)


class MessageRow(TypedDict):
    id: int
    role: str  # "user" | "assistant" | "system"
    content: str
    status: str
    error: str
    run_id: str
    summary: str  # one-line summary of the run's thinking (assistant only)
    has_panel: bool  # there is something to unfold (thinking, tools, todos)
    expanded: bool
    thinking: str
    tools: list[ToolRow]
    todos: list[TodoRow]
    answers: list[AnswerRow]
    stream_id: str  # the renderer's stream of an answer ("" content: the page holds it)
    version: int  # 1-based position among its siblings
    versions: int  # number of siblings (1: no switcher)
    usage: str  # "1.2K in · 85 out tokens · $0.0031" (assistant answers with usage)
    files: list[FileRow]  # attached to a user message


class ModelRow(TypedDict):
    id: int
    name: str
    base_url: str
    model_name: str
    context_length: str
    is_default: bool
    has_key: bool
    supports_images: bool  # attached images go to it as image parts
    price_input: str  # USD per million tokens, "" when not set
    price_output: str


class SkillRow(TypedDict):
    folder: str
    name: str
    description: str
    error: str


def session_row(chat: ChatSession, state: str = "") -> SessionRow:
    return SessionRow(
        uuid=chat.session_uuid,
        title=chat.title or "New conversation",
        state=state,
        archived=chat.status == "ARCHIVED",
        pinned=chat.pinned_at is not None,
        folder_id=chat.folder_id or 0,
        scheduled=chat.schedule_id is not None,
    )


def summary_line(seconds: float | None, tools: int, todo_done: int, todo_total: int) -> str:
    """'Worked for 12 s · 3 tools · 2/3 tasks' (parts without data are left out)."""
    parts = []
    if seconds is not None:
        parts.append(f"Worked for {max(seconds, 0):.0f} s")
    if tools:
        parts.append(f"{tools} tool{'s' if tools != 1 else ''}")
    if todo_total:
        parts.append(f"{todo_done}/{todo_total} tasks")
    return " · ".join(parts)


def _pretty(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def tool_row(call: ToolCall, view: ToolView | None = None) -> ToolRow:
    """One call with its arguments and result as JSON, and its view (`view`: shaped with
    the run's earlier calls, see `tool_rows`)."""
    duration = f"{call.duration_ms / 1000:.1f} s" if call.duration_ms is not None else ""
    name, server = mcp_name(call.tool)
    return ToolRow(
        call_id=call.call_id,
        tool=call.tool,
        args=_pretty(call.args),
        result=_pretty(call.result),
        duration=duration,
        is_error=call.is_error,
        done=call.done,
        progress=call.progress,
        view=view if view is not None else shape(call),
        name=name,
        server=server,
        children=[],
        fold="",
    )


def tool_rows(
    calls: tuple[ToolCall, ...],
    cache: ShapeCache | None = None,
    run: RunView | None = None,
    children_of_running: bool = True,
) -> list[ToolRow]:
    """A run's calls for the thinking panel (live and stored alike). A call its view shows
    whole carries no JSON besides: the rows travel to the page on every tool change.
    With `run`, a delegate_task call carries its children's cards (a running call's only
    with `children_of_running`: the live feed sends those apart, see display/feed.py)."""
    views = (cache or ShapeCache()).shape_calls(calls)
    rows = []
    for call, view in zip(calls, views, strict=True):
        row = tool_row(call, view)
        if view["kind"] != GENERIC:
            row["args"] = row["result"] = ""
        if run is not None and call.tool == DELEGATE_TOOL and (call.done or children_of_running):
            row["fold"] = fold_line(run, call.call_id)
            row["children"] = children_rows(run, call.call_id)
            if row["children"]:  # the cards show the goals and the summaries the JSON repeats
                row["args"] = row["result"] = ""
        rows.append(row)
    return rows


def todo_rows(view: RunView) -> list[TodoRow]:
    return [
        TodoRow(
            id=str(t.get("id", "")),
            content=str(t.get("content", "")),
            status=str(t.get("status", "")),
        )
        for t in view.todos
    ]


def panel_fields(view: RunView) -> dict[str, Any]:
    """The unfolded thinking panel of a run, as MessageRow fields."""
    return {
        "thinking": view.thinking,
        "tools": tool_rows(view.tools, run=view),
        "todos": todo_rows(view),
        "answers": [
            AnswerRow(question=q, answer=a if a is not None else "(cancelled)")
            for q, a in view.answers
        ],
    }


def file_row(row: Attachment) -> FileRow:
    ext = row.name.rsplit(".", 1)[-1] if "." in row.name else ""
    return FileRow(
        id=row.id or 0,
        name=row.name,
        size=human_size(row.size),
        kind=(ext if 0 < len(ext) <= 4 else "file").upper(),
        image=row.media_type in IMAGE_TYPES,
        url=routes.attachment_url(row.id or 0),
        thumb=routes.thumbnail_url(row.id or 0) if row.media_type in IMAGE_TYPES else "",
    )


def message_row(
    message: ChatMessage,
    stats: RunStats | None = None,
    version: tuple[int, int] = (1, 1),
    usage: str = "",
    files: list[Attachment] | None = None,
) -> MessageRow:
    seconds = None
    if message.completed_at and message.role == "ASSISTANT":
        seconds = (message.completed_at - message.created_at).total_seconds()
    stats = stats or RunStats()
    summary = summary_line(seconds, stats.tools, stats.todo_done, stats.todo_total)
    return MessageRow(
        id=message.id or 0,
        role=message.role.lower(),
        content=message.content or "",
        status=message.status,
        error=message.error or "",
        run_id=message.run_id or "",
        summary=summary if message.role == "ASSISTANT" else "",
        has_panel=stats.has_panel,
        expanded=False,
        thinking="",
        tools=[],
        todos=[],
        answers=[],
        # Where the page's renderer keeps the answer's text (copy reads it there).
        stream_id=final_stream_id(message.id or 0)
        if message.role == "ASSISTANT" and message.content
        else "",
        version=version[0],
        versions=version[1],
        usage=usage,
        files=[file_row(f) for f in files or []],
    )


def model_row(model: ModelConfig) -> ModelRow:
    return ModelRow(
        id=model.id or 0,
        name=model.name,
        base_url=model.base_url,
        model_name=model.model_name,
        context_length=str(model.context_length or ""),
        is_default=model.is_default,
        has_key=bool(model.api_key),
        supports_images=bool(model.supports_images),
        price_input="" if model.price_input is None else f"{model.price_input:g}",
        price_output="" if model.price_output is None else f"{model.price_output:g}",
    )


def skill_row(skill: Skill) -> SkillRow:
    return SkillRow(
        folder=skill.folder, name=skill.name, description=skill.description, error=skill.error or ""
    )
