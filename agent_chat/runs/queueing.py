"""The RunManager's queue (messages sent one after another as runs end) and preparing a
conversation's agent in the background: a mixin of `RunManager` (runs/manager.py), which
gives it `storage`, `client`, `bus`, `settings`, `send`, `running_in`,
`validate_message` and `_store`. Whether a run goes on is asked with `running_in`: with
several workers the conversation's run may be another worker's (it sends the queue on when
its run ends, runs/consumer.py `on_finished`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from agent_chat.config import Settings
from agent_chat.db import queue, run_bridges, turns
from agent_chat.db.models import MessageStatus
from agent_chat.db.running import RunningRun
from agent_chat.runs.bridge_model import bridge_model
from agent_chat.runs.bridges import BridgeSet, NoHealthyBridge
from agent_chat.runs.bus import RunBus, SessionChange
from agent_chat.runs.client import BridgeClient, BridgeError
from agent_chat.runs.consumer import LiveRun
from agent_chat.runs.storage import Storage

log = logging.getLogger(__name__)


class RunRefused(Exception):
    """A run could not be started; the message says why, for the person; `code` which rule
    (db/running.py's RUN_ACTIVE, TOO_MANY_RUNS; "refused" for the others)."""

    def __init__(self, message: str, code: str = "refused") -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class StartedRun:
    run_id: str
    user_message_id: int
    assistant_message_id: int


class QueueAndPrepare:
    # Given by RunManager.
    settings: Settings
    storage: Storage
    client: BridgeClient
    bridges: BridgeSet
    bus: RunBus
    _background_tasks: set[asyncio.Task]
    running_in: Callable[..., Awaitable[RunningRun | None]]
    validate_message: Callable[[str], str]
    _store: Callable[..., Awaitable[Any]]
    send: Callable[..., Awaitable[StartedRun]]

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
        self._in_background(work, "prepare-agent")

    async def _prepare(
        self,
        session_uuid: str,
        user_id: int,
        model_id: int | None,
        tool_profile: str | None,
        draft_hermes_session: str | None,
    ) -> None:
        await self.shared_memory.ensure()  # type: ignore[attr-defined]
        try:
            if await self.running_in(session_uuid, user_id=user_id) is not None:
                return  # its agent is working already
            target = await self.storage.call(
                turns.agent_target,
                session_uuid=session_uuid,
                user_id=user_id,
                model_id=model_id,
                tool_profile=tool_profile,
                enabled_profiles=self.settings.tool_profiles,
                draft_hermes_session=draft_hermes_session,
            )
            # The bridge the next run would use (runs/bridges.py: sticky, else least busy).
            last = await self.storage.call(run_bridges.last_run_bridge, session_uuid=session_uuid)
            url = self.bridges.choose(last_bridge=last, hermes_session=target.hermes_session)
            await self.bridges.client(url).prepare(  # in the owner's hermes home
                target.hermes_session,
                bridge_model(target.model),
                target.tool_profile,
                user_id=user_id,
            )
            self.bridges.note_prepared(url, target.hermes_session)
        except (turns.Refused, BridgeError, NoHealthyBridge, SQLAlchemyError) as exc:
            log.debug("preparing the agent of %s skipped: %s", session_uuid, exc)

    async def queue(
        self, *, user_id: int, session_uuid: str, text: str, **choices: Any
    ) -> StartedRun | None:
        """Queue a message behind the conversation's run; sent at once (the StartedRun) when
        no run works any more. Another person's conversation is NotFound."""
        self.validate_message(text)
        await self._store(
            queue.add_queued, session_uuid=session_uuid, user_id=user_id, content=text, **choices
        )
        if await self.running_in(session_uuid, user_id=user_id) is None:
            return await self._send_queued(session_uuid, user_id)
        change = SessionChange(session_uuid, "running", user_id)
        self.bus.publish_session(change)  # tabs show it
        return None

    def _send_next_queued(self, live: LiveRun, status: MessageStatus) -> None:
        # A stop holds the queue: the person took control. Otherwise the next one goes.
        if status == MessageStatus.STOPPED or live.owner_id is None:
            return
        self._in_background(self._send_queued(live.session_uuid, live.owner_id), "send-queued")

    def _in_background(self, work: Any, name: str) -> None:
        # Kept until done (close() waits for them): asyncio holds tasks only weakly.
        task = asyncio.create_task(work, name=name)
        self._background_tasks.add(task)
        task.add_done_callback(self._background_tasks.discard)

    async def _send_queued(self, session_uuid: str, owner_id: int) -> StartedRun | None:
        """The conversation's next queued message, sent for its owner."""
        queued = await self._store(queue.pop_queued, session_uuid=session_uuid)
        if queued is None:
            return None
        try:
            return await self.send(
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
            await self._store(queue.put_back, queued=queued)
            return None
