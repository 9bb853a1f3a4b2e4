"""Sessions: create, list, read, change, delete, reset, page messages.

Changing, deleting and resetting one are the page's use cases (services/conversations.py,
services/runs.py, also state/sidebar.py, state/folders.py, state/chat.py); a session's
`{session_id}` is its UUID.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query, Response
from pydantic import Field

from agent_chat import routes
from agent_chat.api.deps import Backend, Me, Svc
from agent_chat.api.errors import ApiError, not_found, responses
from agent_chat.api.schemas import (
    MAX_ID,
    Body,
    MessagePage,
    SessionCreate,
    SessionCreated,
    SessionDetail,
    SessionOut,
    SessionPage,
    SessionPatch,
)
from agent_chat.api.views import message_out, session_out
from agent_chat.db.models import ChatSession, MessageRole
from agent_chat.runs.manager import RunRefused
from agent_chat.services import attachments, listing, run_logs
from agent_chat.services.conversations import (
    UNSET,
    change_conversation,
    conversation_for,
    create_conversation,
    delete_conversation,
    open_conversation,
)
from agent_chat.services.runs import reset_conversation

router = APIRouter(tags=["sessions"])
MAX_PAGE = 200


async def _session_out(svc: Backend, chat: ChatSession, me: int) -> SessionOut:
    states = await listing.conversation_states(svc, user_id=me)
    preview = await listing.previews(svc, user_id=me, chats=[chat])
    return session_out(
        chat,
        state=states.runs.get(chat.session_uuid, ""),
        waiting=states.waiting(chat),
        preview=preview.get(chat.id or 0),
    )


@router.post(
    routes.API_SESSIONS, status_code=201, response_model=SessionCreated, responses=responses(422)
)
async def create_session(svc: Svc, me: Me, body: SessionCreate | None = None) -> SessionCreated:
    """A new, empty conversation."""
    body = body or SessionCreate()
    chat = await create_conversation(
        svc,
        user_id=me,
        title=body.title or "",
        model_id=body.model_id,
        skill_folder=body.skill_folder,
    )
    return SessionCreated(session_id=chat.session_uuid, session_uuid=chat.session_uuid)


@router.get(routes.API_SESSIONS, response_model=SessionPage)
async def list_sessions(
    svc: Svc,
    me: Me,
    limit: int = Query(50, ge=1, le=MAX_PAGE),
    offset: int = Query(0, ge=0, le=1_000_000),
    archived: bool = Query(False, description="Include archived sessions."),
    search: str | None = Query(None, max_length=200),
) -> SessionPage:
    """Sessions, most recent activity first, with their run state (as the sidebar)."""
    rows = await listing.list_conversations(
        svc,
        user_id=me,
        limit=limit + 1,
        offset=offset,
        include_archived=archived,
        search=search,
    )
    shown = rows[:limit]
    states = await listing.conversation_states(svc, user_id=me)
    previews = await listing.previews(svc, user_id=me, chats=shown)
    has_more = len(rows) > limit
    return SessionPage(
        sessions=[
            session_out(
                c,
                state=states.runs.get(c.session_uuid, ""),
                waiting=states.waiting(c),
                preview=previews.get(c.id or 0),
            )
            for c in shown
        ],
        has_more=has_more,
        next_offset=offset + limit if has_more else None,
    )


@router.get(routes.API_SESSION, response_model=SessionDetail, responses=responses(404))
async def get_session(
    svc: Svc,
    me: Me,
    session_id: str,
    logs: bool = Query(True, description="Include each assistant message's run log."),
) -> SessionDetail:
    """The session and its active branch; assistant messages with their logs and versions."""
    view = await open_conversation(svc, user_id=me, session_uuid=session_id, limit=0)
    if view is None:
        raise not_found(f"Session {session_id!r}")
    assistant_ids = [m.id for m in view.messages if m.role == MessageRole.ASSISTANT.value]
    stored = await run_logs.logs_of(svc, user_id=me, message_ids=assistant_ids) if logs else {}
    messages = [
        message_out(
            m,
            version=view.versions.get(m.id, (1, 1)),
            logs=stored.get(m.id),
            files=view.files.get(m.id),
        )
        for m in view.messages
    ]
    return SessionDetail(session=await _session_out(svc, view.chat, me), messages=messages)


@router.patch(routes.API_SESSION, response_model=SessionOut, responses=responses(404, 409))
async def update_session(svc: Svc, me: Me, session_id: str, body: SessionPatch) -> SessionOut:
    """Change the title, the model or skill for the next runs, archive, pin or file it."""
    given = body.model_fields_set
    # Only the fields sent: a null folder, model or skill is a value ("none", "default").
    chat = await change_conversation(
        svc,
        user_id=me,
        session_uuid=session_id,
        title=body.title,
        archived=body.archived,
        pinned=body.pinned,
        folder_id=body.folder_id if "folder_id" in given else UNSET,
        model_id=body.model_id if "model_id" in given else UNSET,
        skill_folder=body.skill_folder if "skill_folder" in given else UNSET,
    )
    return await _session_out(svc, chat, me)


@router.delete(
    routes.API_SESSION, status_code=204, response_class=Response, responses=responses(404, 409)
)
async def delete_session(svc: Svc, me: Me, session_id: str) -> Response:
    """Delete the session with its messages, logs and workspace files."""
    await delete_conversation(svc, user_id=me, session_uuid=session_id)
    return Response(status_code=204)


class ResetBody(Body):
    keep_history: Literal[True] = Field(
        default=True, description="Messages are always kept; the agent starts afresh."
    )


@router.post(routes.API_SESSION_RESET, response_model=SessionOut, responses=responses(404, 409))
async def reset_session(
    svc: Svc, me: Me, session_id: str, body: ResetBody | None = None
) -> SessionOut:
    """A fresh agent: later runs see nothing above the RESET marker."""
    try:
        await reset_conversation(svc, user_id=me, session_uuid=session_id)
    except RunRefused as exc:
        raise ApiError(409, str(exc)) from exc
    chat = await conversation_for(svc, user_id=me, session_uuid=session_id)
    return await _session_out(svc, chat, me)


@router.get(routes.API_SESSION_MESSAGES, response_model=MessagePage, responses=responses(404))
async def list_messages(
    svc: Svc,
    me: Me,
    session_id: str,
    before: int | None = Query(
        None, ge=1, le=MAX_ID, description="A message id of the active branch."
    ),
    limit: int = Query(50, ge=1, le=MAX_PAGE),
) -> MessagePage:
    """The active branch, a page at a time, oldest first within the page."""
    page = await run_logs.branch_page(
        svc,
        session_uuid=session_id,
        user_id=me,
        before=before,
        limit=limit,
    )
    if page is None:
        raise not_found(f"Session {session_id!r}")
    if page is False:
        raise not_found(f"Message {before} on the active branch")
    shown, versions, has_more = page
    files = await attachments.of_messages(svc, user_id=me, message_ids=[m.id for m in shown])
    return MessagePage(
        messages=[
            message_out(m, version=versions.get(m.id, (1, 1)), files=files.get(m.id)) for m in shown
        ],
        has_more=has_more,
    )
