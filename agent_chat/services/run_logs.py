"""Reading what runs wrote: an answer's stored log as its thinking panel, the API's run
details and logs, and where a resumed stream starts. Every read takes the acting person and
treats another person's answer or run as missing."""

from __future__ import annotations

from collections.abc import Sequence

from agent_chat.db import api_reads, logs
from agent_chat.db.api_reads import RunInfo
from agent_chat.db.models import ChatMessage, ChatMessageLog
from agent_chat.protocol.log_codec import row_to_event
from agent_chat.protocol.reducer import RunView, replay
from agent_chat.services.backend import Backend


async def answer_view(svc: Backend, *, user_id: int, message_id: int) -> RunView:
    """The answer's run as its thinking panel shows it, rebuilt from the stored log
    (empty for another person's answer)."""
    rows = await svc.storage.call(logs.owned_logs, message_id=message_id, user_id=user_id)
    return replay([row_to_event(r.seq, r.kind, r.content, r.meta_json) for r in rows])


async def logs_of(
    svc: Backend, *, user_id: int, message_ids: Sequence[int]
) -> dict[int, list[ChatMessageLog]]:
    """message id -> its stored log rows, for the person's answers among `message_ids`."""
    return await svc.storage.call(api_reads.logs_of, user_id=user_id, message_ids=message_ids)


async def run_info(svc: Backend, *, user_id: int, run_id: str) -> RunInfo | None:
    """The run's answer, conversation, open question and last seq; None when unknown or
    another person's."""
    return await svc.storage.call(api_reads.run_info, run_id=run_id, user_id=user_id)


async def row_containing(
    svc: Backend, *, user_id: int, run_id: str, seq: int
) -> ChatMessageLog | None:
    """The stored log row holding event `seq` of the run (rows merge several deltas)."""
    return await svc.storage.call(api_reads.row_containing, run_id=run_id, user_id=user_id, seq=seq)


async def branch_page(
    svc: Backend, *, user_id: int, session_uuid: str, before: int | None, limit: int
) -> tuple[list[ChatMessage], dict[int, tuple[int, int]], bool] | None | bool:
    """A page of the active branch before message `before` (None: the newest), its versions
    and whether older ones exist; None for an unknown conversation, False when `before` is
    not on the branch."""
    return await svc.storage.call(
        api_reads.page_of_branch,
        session_uuid=session_uuid,
        user_id=user_id,
        before=before,
        limit=limit,
    )
