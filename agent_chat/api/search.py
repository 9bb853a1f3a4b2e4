"""Full-text search over the HTTP API: the sidebar's search (services/listing.py) for scripts."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query
from pydantic import Field

from agent_chat import routes
from agent_chat.api.deps import Me, Svc
from agent_chat.api.schemas import Out, Timestamp
from agent_chat.services.listing import search_conversations

router = APIRouter(tags=["sessions"])


class SegmentOut(Out):
    text: str
    mark: bool = Field(description="A matched word (the page shows it in <mark>).")


class SearchResultOut(Out):
    session_id: str = Field(description="The conversation's UUID.")
    title: list[SegmentOut]
    snippet: list[SegmentOut] = Field(description="Plain text around the match; never HTML.")
    message_id: int | None = Field(description="The matching message; null: the title matched.")
    role: Literal["USER", "ASSISTANT"] | None
    at: Timestamp
    archived: bool


class SearchPage(Out):
    results: list[SearchResultOut]


@router.get(routes.API_SEARCH, response_model=SearchPage)
async def search_sessions(
    svc: Svc,
    me: Me,
    q: str = Query(..., max_length=200, description='Words, "a phrase", or a prefix*.'),
    limit: int = Query(30, ge=1, le=100),
) -> SearchPage:
    """Conversations whose title, questions or answers match, newest match first, one
    result per conversation. Any text is a valid query (operators are plain words)."""
    hits = await search_conversations(svc, user_id=me, query=q, limit=limit)
    return SearchPage(
        results=[
            SearchResultOut(
                session_id=h.session_uuid,
                title=[SegmentOut(**s) for s in h.title],
                snippet=[SegmentOut(**s) for s in h.snippet],
                message_id=h.message_id,
                role=h.role or None,
                at=h.at,
                archived=h.archived,
            )
            for h in hits
        ]
    )
