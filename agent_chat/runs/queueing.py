"""Two collaborators of the RunManager: the queue (messages sent one after another as runs
end) and preparing a conversation's agent in the background. Whether a run goes on is asked
of the read side (`RunReads.running_in`): with several workers the conversation's run may be
another worker's (it sends the queue on when its run ends, runs/consumer.py `on_finished`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from agent_chat.config import Settings
from agent_chat.db import queue, run_bridges, turns
from agent_chat.db.models import MessageStatus
from agent_chat.runs.bridge_model import bridge_model
from agent_chat.runs.bridges import BridgeSet, NoHealthyBridge
from agent_chat.runs.bus import RunBus, SessionChange
from agent_chat.runs.client import BridgeError
from agent_chat.runs.consumed import BackgroundTasks
from agent_chat.runs.consumer import ConsumedRun
from agent_chat.runs.memory_handover import MemoryHandover
from agent_chat.runs.rules import RunRefused, StartedRun, check_text, store_or_refuse
from agent_chat.runs.run_reads import RunReads
from agent_chat.runs.storage import Storage

log = logging.getLogger(__name__)


class AgentPreparer:
    def __init__(
        self,
        *,
        settings: Settings,
        storage: Storage,
        bridges: BridgeSet,
        reads: RunReads,
        memory_handover: MemoryHandover,
        background: BackgroundTasks,
    ) -> None:
        self._settings = settings
        self._storage = storage
        self._bridges = bridges
        self._reads = reads
        self._shared_memory = memory_handover
        self._background = background

    def prepare(
        self,
        session_uuid: str,
        *,
        user_id: int,
        model_id: int | None = None,
        tool_profile: str | None = None,
        draft_hermes_session: str | None = None,
    ) -> None:
        """Have the bridge build the agent the conversation's next message needs, in the
        background (a conversation was opened, or its model or tools changed), so that
        message starts at once. Best effort: a failure only means the run builds it.
        `draft_hermes_session`: a new conversation, created by its first message. Another
        person's conversation is skipped like a missing one."""
        work = self._prepare(session_uuid, user_id, model_id, tool_profile, draft_hermes_session)
        self._background.spawn(work, "prepare-agent")

    async def _prepare(
        self,
        session_uuid: str,
        user_id: int,
        model_id: int | None,
        tool_profile: str | None,
        draft_hermes_session: str | None,
    ) -> None:
        await self._shared_memory.ensure()
        try:
            if await self._reads.running_in(session_uuid, user_id=user_id) is not None:
                return  # its agent is working already
            target = await self._storage.call(
                turns.agent_target,
                session_uuid=session_uuid,
                user_id=user_id,
                model_id=model_id,
                tool_profile=tool_profile,
                enabled_profiles=self._settings.tool_profiles,
                draft_hermes_session=draft_hermes_session,
            )
            # The bridge the next run would use (runs/bridges.py: sticky, else least busy).
            last = await self._storage.call(run_bridges.last_run_bridge, session_uuid=session_uuid)
            url = self._bridges.choose(last_bridge=last, hermes_session=target.hermes_session)
            await self._bridges.client(url).prepare(  # in the owner's hermes home
                target.hermes_session,
                bridge_model(target.model),
                target.tool_profile,
                user_id=user_id,
                mcp_servers=target.mcp_servers,
            )
            self._bridges.note_prepared(url, target.hermes_session)
        except (turns.Refused, BridgeError, NoHealthyBridge, SQLAlchemyError) as exc:
            log.debug("preparing the agent of %s skipped: %s", session_uuid, exc)


class MessageQueue:
    def __init__(
        self,
        *,
        storage: Storage,
        bus: RunBus,
        reads: RunReads,
        background: BackgroundTasks,
        send: Callable[..., Awaitable[StartedRun]],
        max_message_chars: int,
    ) -> None:
        self._storage = storage
        self._bus = bus
        self._reads = reads
        self._background = background
        self._send = send  # RunManager.send: a queued message starts like a typed one
        self._max_message_chars = max_message_chars

    async def add(
        self, *, user_id: int, session_uuid: str, text: str, **choices: Any
    ) -> StartedRun | None:
        """Queue a message behind the conversation's run; sent at once (the StartedRun) when
        no run works any more. Another person's conversation is NotFound."""
        check_text(text, limit=self._max_message_chars)
        await store_or_refuse(
            self._storage,
            queue.add_queued,
            session_uuid=session_uuid,
            user_id=user_id,
            content=text,
            **choices,
        )
        if await self._reads.running_in(session_uuid, user_id=user_id) is None:
            return await self._send_queued(session_uuid, user_id)
        change = SessionChange(session_uuid, "running", user_id)
        self._bus.publish_session(change)  # tabs show it
        return None

    def send_next(self, live: ConsumedRun, status: MessageStatus) -> None:
        """A run ended (the consumer's `on_finished`): the conversation's next queued
        message goes, unless the person stopped the run (they took control)."""
        if status == MessageStatus.STOPPED or live.owner_id is None:
            return
        self._background.spawn(self._send_queued(live.session_uuid, live.owner_id), "send-queued")

    async def _send_queued(self, session_uuid: str, owner_id: int) -> StartedRun | None:
        """The conversation's next queued message, sent for its owner."""
        queued = await store_or_refuse(self._storage, queue.pop_queued, session_uuid=session_uuid)
        if queued is None:
            return None
        try:
            return await self._send(
                user_id=owner_id,
                session_uuid=session_uuid,
                text=queued.content,
                model_id=queued.model_id,
                skill_folder=queued.skill_folder,
                tool_profile=queued.tool_profile,
            )
        except RunRefused as exc:
            # Back in its place at the front of the queue; it goes after the next run.
            log.warning("a queued message of %s could not start: %s", session_uuid, exc)
            await store_or_refuse(self._storage, queue.put_back, queued=queued)
            return None
