"""What the HTTP API reads and changes beyond the page's store functions, each in one
transaction: list previews, logs of many messages, a run's message and question, the delta
row a resuming stream starts in, and a session update of several fields at once.

Each takes the acting `user_id` (a cookie's user or a token's owner): another person's
conversation, message or run reads as missing."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func
from sqlmodel import Session, col, select

from agent_chat.db import folders, model_configs, pauses, sessions
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.logs import list_logs
from agent_chat.db.messages import active_branch, message_by_run, versions_of_branch
from agent_chat.db.models import (
    ChatFolder,
    ChatMessage,
    ChatMessageLog,
    ChatSession,
    MessageRole,
    RunPause,
    SessionStatus,
)

PREVIEW_CHARS = 120


def _mine(user_id: int, session_ids: Sequence[int]):
    """Those of `session_ids` that are `user_id`'s, as a subquery."""
    return select(ChatSession.id).where(
        col(ChatSession.id).in_(session_ids), col(ChatSession.owner_id) == user_id
    )


def previews(*, session: Session, user_id: int, session_ids: Sequence[int]) -> dict[int, str]:
    """Each session's newest user or assistant message, on one line, cut to 120 characters."""
    if not session_ids:
        return {}
    newest = (
        select(func.max(ChatMessage.id))
        .where(
            col(ChatMessage.session_id).in_(_mine(user_id, session_ids)),
            col(ChatMessage.role).in_([MessageRole.USER.value, MessageRole.ASSISTANT.value]),
            ChatMessage.content != "",
        )
        .group_by(col(ChatMessage.session_id))
    )
    rows = session.exec(
        select(ChatMessage.session_id, ChatMessage.content).where(col(ChatMessage.id).in_(newest))
    ).all()
    return {sid: " ".join(content.split())[:PREVIEW_CHARS] for sid, content in rows}


def logs_of(
    *, session: Session, user_id: int, message_ids: Sequence[int]
) -> dict[int, list[ChatMessageLog]]:
    """The stored log rows of these messages (those in `user_id`'s conversations), in seq
    order."""
    if not message_ids:
        return {}
    query = (
        select(ChatMessageLog)
        .join(ChatMessage, col(ChatMessage.id) == ChatMessageLog.message_id)
        .join(ChatSession, col(ChatSession.id) == ChatMessage.session_id)
        .where(
            col(ChatMessageLog.message_id).in_(message_ids), col(ChatSession.owner_id) == user_id
        )
        .order_by(col(ChatMessageLog.message_id), col(ChatMessageLog.seq))
    )
    out: dict[int, list[ChatMessageLog]] = {m: [] for m in message_ids}
    for row in session.exec(query).all():
        out[row.message_id].append(row)
    return out


@dataclass(frozen=True)
class RunInfo:
    message: ChatMessage
    session_uuid: str
    pause: RunPause | None  # the newest unanswered question (or approval), if any
    last_seq: int  # the last stored seq (a merged row counts up to its last seq)


def _owned_run(session: Session, run_id: str, user_id: int) -> ChatMessage | None:
    """The run's answer if its conversation is `user_id`'s."""
    message = message_by_run(session=session, run_id=run_id)
    if message is None:
        return None
    chat = session.get(ChatSession, message.session_id)
    return message if chat is not None and chat.owner_id == user_id else None


def run_info(*, session: Session, run_id: str, user_id: int) -> RunInfo | None:
    """The run, if it is `user_id`'s (None: unknown, or another person's)."""
    message = _owned_run(session, run_id, user_id)
    if message is None:
        return None
    chat = session.get(ChatSession, message.session_id)
    rows = list_logs(session=session, message_id=message.id)
    last = max((_last_seq(r) for r in rows), default=0)
    return RunInfo(
        message=message,
        session_uuid=chat.session_uuid if chat else "",
        pause=pauses.open_pause(session=session, message_id=message.id),
        last_seq=last,
    )


def _last_seq(row: ChatMessageLog) -> int:
    meta = json.loads(row.meta_json) if row.meta_json else {}
    return int(meta.get("seq_to", row.seq))


def row_containing(
    *, session: Session, run_id: str, user_id: int, seq: int
) -> ChatMessageLog | None:
    """The stored row of the run that covers `seq` and goes on after it (a merged delta row
    that a stream resuming after `seq` must cut), or None."""
    message = _owned_run(session, run_id, user_id)
    if message is None or seq <= 0:
        return None
    query = (
        select(ChatMessageLog)
        .where(ChatMessageLog.message_id == message.id, col(ChatMessageLog.seq) <= seq)
        .order_by(col(ChatMessageLog.seq).desc())
        .limit(1)
    )
    row = session.exec(query).first()
    return row if row is not None and _last_seq(row) > seq else None


_UNSET = object()


def update_session(
    *,
    session: Session,
    session_uuid: str,
    user_id: int,
    title: str | None = None,
    model_id: int | None | object = _UNSET,
    skill_folder: str | None | object = _UNSET,
    archived: bool | None = None,
    known_skills: Sequence[str] = (),
    pinned: bool | None = None,
    folder_id: int | None | object = _UNSET,
) -> ChatSession:
    """Change any of title, model, skill, archived, pinned and folder at once (all or nothing)."""
    mine = {"session_uuid": session_uuid, "user_id": user_id}
    chat = sessions.get_session(session=session, **mine)
    if chat is None:
        raise NotFound(f"Chat session {session_uuid!r} does not exist")
    if title is not None:
        chat = sessions.rename_session(session=session, title=title, **mine)
    if model_id is not _UNSET or skill_folder is not _UNSET:
        new_model = chat.model_id if model_id is _UNSET else model_id
        new_skill = chat.skill_folder if skill_folder is _UNSET else skill_folder
        if (
            new_model is not None
            and model_configs.get_model(session=session, model_id=new_model) is None
        ):
            raise ValidationFailed({"modelId": f"There is no model {new_model}."})
        if new_skill is not None and new_skill not in known_skills:
            raise ValidationFailed({"skillFolder": f"There is no usable skill {new_skill!r}."})
        chat = sessions.set_session_model(
            session=session, session_id=chat.id, model_id=new_model, skill_folder=new_skill
        )
    if archived is not None:
        status = SessionStatus.ARCHIVED if archived else SessionStatus.ACTIVE
        chat = sessions.set_session_status(
            session=session, session_id=chat.id, user_id=user_id, status=status
        )
    if pinned is not None:
        chat = folders.set_pinned(session=session, pinned=pinned, **mine)
    if folder_id is not _UNSET:
        folder = session.get(ChatFolder, folder_id) if folder_id is not None else None
        if folder_id is not None and (folder is None or folder.owner_id != user_id):
            raise ValidationFailed({"folderId": f"There is no folder {folder_id}."})
        chat = folders.move_session(session=session, folder_id=folder_id, **mine)
    return chat


UNSET = _UNSET


def create_session(
    *,
    session: Session,
    user_id: int,
    title: str = "",
    model_id: int | None = None,
    skill_folder: str | None = None,
    known_skills: Sequence[str] = (),
) -> ChatSession:
    """A new session; an unknown model or skill is refused before anything is written."""
    if model_id is not None and model_configs.get_model(session=session, model_id=model_id) is None:
        raise ValidationFailed({"modelId": f"There is no model {model_id}."})
    if skill_folder is not None and skill_folder not in known_skills:
        raise ValidationFailed({"skillFolder": f"There is no usable skill {skill_folder!r}."})
    return sessions.create_session(
        session=session,
        user_id=user_id,
        title=title,
        model_id=model_id,
        skill_folder=skill_folder,
    )


def page_of_branch(
    *, session: Session, session_uuid: str, user_id: int, before: int | None, limit: int
):
    """The active branch's `limit` messages before `before` (or the newest), their versions
    and whether older ones exist; None for an unknown session, False when `before` is not
    on the active branch."""
    chat = sessions.get_session(session=session, session_uuid=session_uuid, user_id=user_id)
    if chat is None:
        return None
    branch = active_branch(session=session, chat_session_id=chat.id)
    end = len(branch)
    if before is not None:
        end = next((i for i, m in enumerate(branch) if m.id == before), -1)
        if end < 0:
            return False
    shown = branch[max(0, end - limit) : end]
    versions = versions_of_branch(session=session, chat_session_id=chat.id, branch=shown)
    return shown, versions, end - len(shown) > 0
