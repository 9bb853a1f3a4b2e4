"""`GET /api/chat/runs/{run_id}/stream`: a run's events as Server-Sent Events.

Built on `RunManager.subscribe(run_id, after_seq)`: the events so far, then live ones, then
the end; a run that is not live here (finished, or before a restart re-attached it) comes
from the stored log. `id:` is the run's seq, `event:` the bridge protocol's event type,
`data:` the event as JSON. A client resumes with `Last-Event-ID` (or `?lastEventId=N`).

Stored text deltas are merged rows (one row for seqs a..b, its last seq as the event's):
a client that saw seq N inside such a row gets only the text after N, cut with the row's
per-seq lengths (`protocol.log_codec.text_after`), so nothing is missing or doubled.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Header, Query
from fastapi.responses import StreamingResponse

from agent_chat import routes
from agent_chat.api.deps import Me, Svc
from agent_chat.api.errors import responses
from agent_chat.api.runs import require_run
from agent_chat.db.models import ChatMessageLog
from agent_chat.protocol.events import RunEvent
from agent_chat.protocol.log_codec import seqs_covered, text_after
from agent_chat.runs.bus import Subscription
from agent_chat.services import run_logs

log = logging.getLogger(__name__)
router = APIRouter(tags=["runs"])

KEEPALIVE_SECONDS = 15.0
FINALISE_WAIT_SECONDS = 10.0


def sse(event: RunEvent, data: dict[str, Any], run_id: str) -> str:
    body = json.dumps({**data, "type": event.type, "seq": event.seq, "run_id": run_id},
                      ensure_ascii=False)  # fmt: skip
    head = f"id: {event.seq}\n" if event.seq else ""  # bridge_link has no seq
    return f"{head}event: {event.type}\ndata: {body}\n\n"


class Resume:
    """Cuts the one stored row that a resume point falls inside."""

    def __init__(self, after: int, row: ChatMessageLog | None) -> None:
        self.after = after
        self.row = row

    def data(self, event: RunEvent) -> dict[str, Any]:
        row, self_data = self.row, event.data
        if (
            row is None
            or event.type != row.kind
            or event.seq != seqs_covered(row.seq, row.meta_json)[-1]
        ):
            return self_data
        self.row = None
        # The same event, not a live delta that happens to end at that seq: it carries the
        # row's whole text. (A live delta with equal text has nothing before it to cut.)
        if self_data.get("text") != row.content:
            return self_data
        rest = text_after(row.seq, row.content, row.meta_json, self.after)
        if rest is None:
            log.warning("row %s of seqs %s has no per-seq lengths: sent whole", row.id,
                        seqs_covered(row.seq, row.meta_json))  # fmt: skip
            return self_data
        return {**self_data, "text": rest}


async def events(
    subscription: Subscription, run_id: str, resume: Resume, keepalive: float
) -> AsyncIterator[str]:
    try:
        while True:
            try:
                async with asyncio.timeout(keepalive):  # not wait_for: see runs/awaiting.py
                    event = await anext(subscription)
            except TimeoutError:
                yield ": keep-alive\n\n"
                continue
            except StopAsyncIteration:
                return
            if event.seq and event.seq <= resume.after:
                continue
            if event.is_terminal:
                # The app stores the outcome, then ends the subscription: waiting for that
                # means a client that got the terminal event finds the answer stored and
                # the conversation free for its next question.
                await _until_end(subscription, FINALISE_WAIT_SECONDS)
                yield sse(event, resume.data(event), run_id)
                return
            yield sse(event, resume.data(event), run_id)
    finally:
        subscription.close()


async def _until_end(subscription: Subscription, timeout: float) -> None:
    try:
        async with asyncio.timeout(timeout):
            async for _ in subscription:
                pass
    except TimeoutError:
        log.warning("a run's subscription did not end %.0f s after its terminal event", timeout)


MAX_SEQ = 2**31 - 1  # the largest seq an integer column holds (PostgreSQL: int4)


def _resume_point(header: str, query: int | None) -> int:
    # The header's pattern (at most 9 digits, below MAX_SEQ) was checked by FastAPI.
    return int(header) if header.strip() else query or 0


@router.get(
    routes.API_RUN_STREAM,
    response_class=StreamingResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "The run's events (SSE)."},
        **responses(404, 422),
    },
)
async def stream_run(
    svc: Svc,
    me: Me,
    run_id: str,
    last_event_id: int | None = Query(
        None, alias="lastEventId", ge=0, le=MAX_SEQ, description="Resume after this seq."
    ),
    # The schema says what is accepted (a client or fuzzer reading it sends only seqs).
    last_event_header: str = Header(
        "",
        alias="Last-Event-ID",
        pattern=r"^\s*[0-9]{0,9}\s*$",  # 9 digits: within MAX_SEQ, the query's bound
        description="Resume after this seq (wins over the query).",
    ),
) -> StreamingResponse:
    """The run's events after the resume point, live until its terminal event (which
    closes the stream); a finished run is replayed from the stored log. `: keep-alive`
    comments every 15 s."""
    await require_run(svc, run_id, me)
    after = _resume_point(last_event_header, last_event_id)
    subscription = await svc.runs.subscribe(run_id, after, user_id=me)
    # Looked up after subscribing: whatever the subscription replays from the database was
    # written by then, so a row it sends merged is found here.
    row = await run_logs.row_containing(svc, user_id=me, run_id=run_id, seq=after)
    return StreamingResponse(
        events(subscription, run_id, Resume(after, row), KEEPALIVE_SECONDS),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
