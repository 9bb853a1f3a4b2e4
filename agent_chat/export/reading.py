"""What an export reads: one session, its messages, their run logs, questions, models and
the files attached to its messages (their rows: the bytes stay in the store).

`collect()` is a store function (keyword-only, takes the session) and runs a handful of
queries whatever the number of messages. The active branch comes from the message store
(`active_branch`), so the export follows exactly the path the page shows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlmodel import Session, col, select

from agent_chat.db.attachment_models import Attachment
from agent_chat.db.attachment_notes import message_attachments
from agent_chat.db.errors import NotFound
from agent_chat.db.messages import active_branch
from agent_chat.db.models import ChatMessage, ChatMessageLog, ChatSession, ModelConfig, RunPause
from agent_chat.db.sessions import get_session
from agent_chat.protocol.log_codec import row_to_event
from agent_chat.protocol.reducer import RunView, replay

BRANCHES = ("active", "all")

# IN lists are sent in chunks: SQLite and PostgreSQL cap the number of bound parameters.
_IN_CHUNK = 500


@dataclass(frozen=True)
class ModelInfo:
    """What an export says about a model (never its key or URL)."""

    id: int
    name: str
    model_name: str

    def label(self) -> str:
        return self.name if self.name == self.model_name else f"{self.name} ({self.model_name})"


@dataclass(frozen=True)
class SessionExport:
    """Everything one export needs, read in one transaction."""

    chat: ChatSession
    branch: str  # "active" | "all"
    messages: list[ChatMessage]  # by id, so a parent comes before its children
    active_ids: list[int]  # the active branch, root first
    logs: dict[int, list[ChatMessageLog]]  # message id → rows by seq
    pauses: dict[int, list[RunPause]]  # message id → questions by id
    models: dict[int, ModelInfo]  # every model the session or a message names
    default_model: ModelInfo | None
    # message id → its files in order (names and sizes only; the bytes stay in the store)
    attachments: dict[int, list[Attachment]] = field(default_factory=dict)

    @property
    def session_model(self) -> ModelInfo | None:
        return self.models.get(self.chat.model_id) if self.chat.model_id else None

    def view(self, message_id: int) -> RunView:
        """The thinking view of a message, replayed from its log like the page does."""
        rows = self.logs.get(message_id, [])
        return replay([row_to_event(r.seq, r.kind, r.content, r.meta_json) for r in rows])


def stored_choices(choices_json: str) -> Any:
    """The choices of a question as stored (a list), or the raw text if it is not JSON."""
    try:
        return json.loads(choices_json or "[]")
    except ValueError:
        return choices_json


Row = TypeVar("Row", ChatMessageLog, RunPause)


def _by_message(
    session: Session, table: type[Row], ids: Sequence[int], *order: Any
) -> dict[int, list[Row]]:
    """Rows of `table` for the messages `ids`, grouped by message id, one query per chunk."""
    grouped: dict[int, list[Row]] = {}
    for start in range(0, len(ids), _IN_CHUNK):
        chunk = list(ids[start : start + _IN_CHUNK])
        query = select(table).where(col(table.message_id).in_(chunk)).order_by(*order)
        for row in session.exec(query).all():
            grouped.setdefault(row.message_id, []).append(row)
    return grouped


def _model_infos(session: Session, model_ids: Iterable[int]) -> dict[int, ModelInfo]:
    ids = sorted(set(model_ids))
    if not ids:
        return {}
    # Named columns only: the api_key column is never even read.
    query = select(ModelConfig.id, ModelConfig.name, ModelConfig.model_name).where(
        col(ModelConfig.id).in_(ids)
    )
    return {mid: ModelInfo(mid, name, model) for mid, name, model in session.exec(query).all()}


def _default_model(session: Session) -> ModelInfo | None:
    query = (
        select(ModelConfig.id, ModelConfig.name, ModelConfig.model_name)
        .where(col(ModelConfig.is_default).is_(True))
        .order_by(col(ModelConfig.id))
    )
    row = session.exec(query).first()
    return ModelInfo(*row) if row else None


def _attachments(session: Session, ids: Sequence[int], user_id: int) -> dict[int, list[Attachment]]:
    """Each message's files, the owner's only (as `services/attachments.of_messages`: an
    export never lends another person's file a name)."""
    found: dict[int, list[Attachment]] = {}
    for start in range(0, len(ids), _IN_CHUNK):
        chunk = list(ids[start : start + _IN_CHUNK])
        for message_id, rows in message_attachments(session=session, message_ids=chunk).items():
            if mine := [row for row in rows if row.owner_id == user_id]:
                found[message_id] = mine
    return found


def _all_messages(session: Session, chat_session_id: int) -> list[ChatMessage]:
    query = (
        select(ChatMessage)
        .where(ChatMessage.session_id == chat_session_id)
        .order_by(col(ChatMessage.id))
    )
    return list(session.exec(query).all())


def collect(
    *, session: Session, session_uuid: str, user_id: int, branch: str = "active"
) -> SessionExport:
    """Read a session for export: the active branch, or (`branch="all"`) the whole tree.

    Raises NotFound for an unknown or malformed uuid (or another person's conversation),
    ValueError for an unknown branch.
    """
    if branch not in BRANCHES:
        raise ValueError(f"branch must be one of: {', '.join(BRANCHES)}")
    chat = get_session(session=session, session_uuid=session_uuid, user_id=user_id)
    if chat is None or chat.id is None:
        raise NotFound(f"Chat session {session_uuid!r} does not exist")
    path = active_branch(session=session, chat_session_id=chat.id)
    messages = _all_messages(session, chat.id) if branch == "all" else path
    ids = [m.id for m in messages if m.id is not None]
    logs = _by_message(
        session, ChatMessageLog, ids, col(ChatMessageLog.message_id), col(ChatMessageLog.seq)
    )
    pauses = _by_message(session, RunPause, ids, col(RunPause.id))
    model_ids = [m.model_id for m in messages if m.model_id] + (
        [chat.model_id] if chat.model_id else []
    )
    return SessionExport(
        chat=chat,
        branch=branch,
        messages=messages,
        active_ids=[m.id for m in path if m.id is not None],
        logs=logs,
        pauses=pauses,
        models=_model_infos(session, model_ids),
        default_model=_default_model(session),
        attachments=_attachments(session, ids, user_id),
    )
