"""Re-attaching to a run still going in the bridge (the app restarted, or another worker's
lease expired): its stored events are replayed into a live run, then the bridge's stream is
consumed from the last stored seq (runs/manager.py follows it like any run)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from agent_chat.db import logs, turns
from agent_chat.db.models import ChatMessage
from agent_chat.protocol.log_codec import stored_event
from agent_chat.protocol.reducer import replay
from agent_chat.runs.consumer import FINAL_STATUS, LiveRun

log = logging.getLogger(__name__)


async def reattach(manager: Any, message: ChatMessage) -> None:
    """Follow `message`'s run in `manager` (a RunManager), unless another worker holds it.
    Whose run it is stays unknown here (`LiveRun.user_id` None) until conversations have an
    owner."""
    if not message.run_id or message.run_id in manager._runs:
        return
    lease = await manager.leases.leases.acquire(message.run_id)
    if lease is None:  # another worker consumes it
        return
    rows = await manager.storage.call(logs.list_logs, message_id=message.id)
    history = [stored_event(r.seq, r.kind, r.content, r.meta_json) for r in rows]
    session_uuid = await manager.storage.call(
        turns.session_uuid_of, chat_session_id=message.session_id
    )
    view = replay([e.as_dict() for e in history])
    live = LiveRun(message.run_id, message.id, message.session_id, session_uuid, view)
    manager._follow(live, history, lease=lease)
    if live.view.finished:
        # The log already holds the terminal event (the app stopped before finalising
        # the message): the bridge has nothing newer and may have dropped the run.
        await manager.consumer.finish(live, status=FINAL_STATUS[live.view.state])
        return
    live.task = asyncio.create_task(manager.consumer.consume(live), name=f"run-{live.run_id}")
    log.info("re-attached to run %s after seq %d", live.run_id, live.view.last_seq)
