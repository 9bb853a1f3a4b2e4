"""Row shapes the browser receives (TypedDicts), built from store objects.

Only what the page shows goes here: never an API key.
"""

from __future__ import annotations

from typing import TypedDict

from agent_chat.db.models import ChatMessage, ChatSession, ModelConfig
from agent_chat.runs.reducer import RunView
from agent_chat.skills import Skill


class SessionRow(TypedDict):
    uuid: str
    title: str
    state: str  # "" | "running" | "waiting"


class MessageRow(TypedDict):
    id: int
    role: str  # "user" | "assistant" | "system"
    content: str
    status: str
    error: str
    run_id: str
    summary: str  # one-line summary of the run's thinking (assistant only)


class ModelRow(TypedDict):
    id: int
    name: str
    base_url: str
    model_name: str
    context_length: str
    is_default: bool
    has_key: bool


class SkillRow(TypedDict):
    folder: str
    name: str
    description: str
    error: str


def session_row(chat: ChatSession, state: str = "") -> SessionRow:
    return SessionRow(uuid=chat.session_uuid, title=chat.title or "New conversation", state=state)


def run_summary(view: RunView) -> str:
    """'Thought for 12 s · 3 tools · 2/3 tasks' (empty when there is nothing to show)."""
    parts = []
    if view.started_ts and view.ended_ts:
        parts.append(f"Worked for {max(view.ended_ts - view.started_ts, 0):.0f} s")
    if view.tools:
        parts.append(f"{len(view.tools)} tool{'s' if len(view.tools) != 1 else ''}")
    done, total = view.todo_counts
    if total:
        parts.append(f"{done}/{total} tasks")
    return " · ".join(parts)


def message_row(message: ChatMessage, summary: str = "") -> MessageRow:
    return MessageRow(
        id=message.id or 0,
        role=message.role.lower(),
        content=message.content or "",
        status=message.status,
        error=message.error or "",
        run_id=message.run_id or "",
        summary=summary,
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
    )


def skill_row(skill: Skill) -> SkillRow:
    return SkillRow(
        folder=skill.folder, name=skill.name, description=skill.description, error=skill.error or ""
    )
