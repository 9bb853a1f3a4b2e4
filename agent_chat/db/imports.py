"""Writing an imported conversation (`export/importing.py` read the file and made the
plan, `db/import_plan.py`, which checked its message tree).

One transaction (the caller's unit of work): the session, every message, log row and question,
and the links of the messages to their files (already stored for the importing person by
`services/imports.py`), go in together or not at all. The message ids are reserved first, so every row goes in with
its parent in one batch, and plain rows (no ORM objects): a 2,000-message tree with its logs
costs a few statements rather than a round trip per message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import uuid4

from sqlalchemy import Table, insert, text
from sqlmodel import Session, SQLModel, col, select

from agent_chat.db.attachment_models import Attachment, MessageAttachment
from agent_chat.db.errors import NotFound
from agent_chat.db.import_plan import ImportPlan
from agent_chat.db.models import (
    ChatMessage,
    ChatMessageLog,
    ChatSession,
    ModelConfig,
    RunPause,
    SessionStatus,
    utcnow,
)


@dataclass(frozen=True)
class Imported:
    chat: ChatSession
    messages: int
    notes: list[str]


def _table(model: type[SQLModel]) -> Table:
    """The Core table: executemany of plain rows, without the ORM's per-row bookkeeping."""
    return model.__table__  # type: ignore[attr-defined]


def _reserve_ids(session: Session, count: int) -> list[int]:
    """`count` new message ids, ascending (so siblings keep the file's order), taken before
    the insert: each row then carries its parent's id and nothing is updated afterwards (on
    PostgreSQL an update recomputes the row's search vector)."""
    if count == 0:
        return []
    if session.get_bind().dialect.name == "postgresql":
        query = text(
            "SELECT nextval(pg_get_serial_sequence('chat_message', 'id')) "
            "FROM generate_series(1, :n)"
        )
        return sorted(session.execute(query, {"n": count}).scalars())
    # SQLite: this transaction holds the write lock since the session row went in, so no
    # other writer can take these ids before the insert.
    highest = session.execute(text("SELECT COALESCE(MAX(id), 0) FROM chat_message")).scalar()
    return list(range(int(highest or 0) + 1, int(highest or 0) + 1 + count))


def _local_models(session: Session, models: dict[int, tuple[str, str]]) -> dict[int, int]:
    """The file's model ids → this app's model with the same name and model name (a model
    the file names but this app lacks is left out: those runs show the default model)."""
    if not models:
        return {}
    rows = session.exec(select(ModelConfig.id, ModelConfig.name, ModelConfig.model_name)).all()
    local = {(name, model_name): mid for mid, name, model_name in rows}
    return {source: local[key] for source, key in models.items() if key in local and local[key]}


def _links(
    session: Session, user_id: int, attachments: dict[int, list[int]], new_id: dict[int, int]
) -> list[dict[str, Any]]:
    """The `message_attachment` rows: the file's message (the file's id → the new id) and
    place; every attachment must be the person's (another's is NotFound, as anywhere)."""
    wanted = sorted({a for ids in attachments.values() for a in ids})
    if not wanted:
        return []
    query = select(Attachment.id).where(
        col(Attachment.id).in_(wanted), col(Attachment.owner_id) == user_id
    )
    missing = set(wanted) - set(session.exec(query).all())
    if missing:
        raise NotFound(f"Attachment {min(missing)} does not exist")
    return [
        {"message_id": new_id[source], "attachment_id": aid, "position": position}
        for source, ids in attachments.items()
        for position, aid in enumerate(dict.fromkeys(ids))
    ]


def import_conversation(
    *,
    session: Session,
    plan: ImportPlan,
    user_id: int,
    attachments: dict[int, list[int]] | None = None,
) -> Imported:
    """A new conversation of `user_id` holding the plan's whole tree; returns it with the
    message count. `attachments`: the file's message id → the person's attachment ids, in
    order, linked to the new message."""
    models = _local_models(session, plan.models)
    now = utcnow()
    chat = ChatSession(
        owner_id=user_id,
        title=plan.title,
        model_id=models.get(plan.model_id) if plan.model_id is not None else None,
        skill_folder=plan.skill_folder,
        tool_profile=plan.tool_profile,
        status=SessionStatus.ACTIVE.value,
        last_summarized_at=plan.last_summarized_at,
        created_at=now,
        last_message_at=now,
        updated_at=now,
    )
    session.add(chat)
    session.flush()
    # Run ids are new too: a question is unique per (run, id), so a second import of the
    # same file must not collide with the first.
    runs: dict[str, str] = {}

    def new_run(run_id: str | None) -> str | None:
        if run_id is None:
            return None
        return runs.setdefault(run_id, str(uuid4()))

    ids = _reserve_ids(session, len(plan.messages))
    new_id = {m.source_id: mid for m, mid in zip(plan.messages, ids, strict=True)}
    rows = [
        {
            "id": new_id[m.source_id],
            "session_id": chat.id,
            # Parents come first in the plan, so each row's parent is in already.
            "parent_id": None if m.parent_id is None else new_id[m.parent_id],
            "is_active": m.is_active,
            "branch_order": m.branch_order,
            "run_id": new_run(m.run_id),
            "role": m.role,
            "content": m.content,
            "status": m.status,
            "model_id": models.get(m.model_id) if m.model_id is not None else None,
            "skill_folder": m.skill_folder,
            "tool_profile": m.tool_profile,
            "error": m.error,
            "input_tokens": m.input_tokens,
            "output_tokens": m.output_tokens,
            "total_tokens": m.total_tokens,
            "context_tokens": m.context_tokens,
            "created_at": m.created_at or now,
            "completed_at": m.completed_at,
        }
        for m in plan.messages
    ]
    logs: list[dict[str, Any]] = []
    pauses: list[dict[str, Any]] = []
    for m in plan.messages:
        mid = new_id[m.source_id]
        logs += [
            {
                "message_id": mid,
                "seq": row.seq,
                "kind": row.kind,
                "content": row.content,
                "tool_name": row.tool_name,
                "meta_json": row.meta_json,
                "created_at": row.created_at or now,
            }
            for row in m.logs
        ]
        pauses += [
            {
                "run_id": new_run(p.run_id) or "",
                "message_id": mid,
                "clarify_id": p.clarify_id,
                "kind": p.kind,
                "question": p.question,
                "detail": p.detail,
                "choices_json": p.choices_json,
                "status": p.status,
                "answer": p.answer,
                "created_at": p.created_at or now,
                "answered_at": p.answered_at,
            }
            for p in m.pauses
        ]
    links = _links(session, user_id, attachments or {}, new_id)
    tables = ((ChatMessage, rows), (ChatMessageLog, logs), (RunPause, pauses))
    for table, values in (*tables, (MessageAttachment, links)):
        if values:
            session.execute(insert(_table(table)), values)
    return Imported(chat=chat, messages=len(rows), notes=plan.notes)
