"""The RunManager's commands on a run: stop, answer (a question or an approval), steer, and
reset (the conversation's fresh agent). Each finds the bridge the run is pinned to: the
consumed run's when this process consumes it, the database's when another worker does."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from agent_chat.db import run_bridges, turns
from agent_chat.db.models import MessageStatus
from agent_chat.runs.bridges import BridgeSet
from agent_chat.runs.client import BridgeClient, BridgeUnavailable, RunNotFound
from agent_chat.runs.consumed import ConsumedRuns
from agent_chat.runs.consumer import BRIDGE_RESTARTED, ConsumedRun, Consumer
from agent_chat.runs.rules import RunRefused, check_text, store_or_refuse
from agent_chat.runs.run_reads import RunReads
from agent_chat.runs.storage import Storage

log = logging.getLogger(__name__)


class RunCommands:
    def __init__(
        self,
        *,
        storage: Storage,
        bridges: BridgeSet,
        consumer: Consumer,
        reads: RunReads,
        consumed: ConsumedRuns,
        lock: asyncio.Lock,
        max_message_chars: int,
    ) -> None:
        self._storage = storage
        self._bridges = bridges
        self._consumer = consumer
        self._reads = reads
        self._consumed = consumed
        self._lock = lock  # the manager's start lock: no run starts during a reset
        self._max_message_chars = max_message_chars

    async def stop(self, run_id: str, *, user_id: int) -> None:
        """Stop `user_id`'s run (nothing to do when it is over)."""
        live = await self._reads.owned(run_id, user_id)
        if live is None:  # over, or consumed by another worker: stop it on its bridge
            pinned = await self._storage.call(run_bridges.pinned_run, run_id=run_id)
            if pinned is not None and pinned.status == MessageStatus.RUNNING.value:
                with contextlib.suppress(RunNotFound):  # its consumer ends it
                    await self._bridges.client(pinned.bridge_url).stop(run_id)
            return
        try:
            await self._bridges.client(live.bridge_url).stop(run_id)
        except RunNotFound:
            if live.task:
                live.task.cancel()
            await self._consumer.finish(live, status=MessageStatus.FAILED, error=BRIDGE_RESTARTED)

    async def answer(self, run_id: str, clarify_id: str, answer: str, *, user_id: int) -> None:
        """Answer a question (or approval) of `user_id`'s run."""
        bridge = await self._bridge_of(run_id, await self._reads.owned(run_id, user_id))
        await bridge.answer_clarify(run_id, clarify_id, answer)

    async def steer(self, run_id: str, text: str, *, user_id: int) -> None:
        """Guidance for `user_id`'s running agent, added to its next tool result."""
        check_text(text, limit=self._max_message_chars)
        bridge = await self._bridge_of(run_id, await self._reads.owned(run_id, user_id))
        await bridge.steer(run_id, text)

    async def reset(self, *, user_id: int, session_uuid: str) -> None:
        """Give the session a fresh agent and add a RESET marker: later runs see nothing above it."""
        async with self._lock:
            if self._consumed.in_conversation(session_uuid, user_id):
                raise RunRefused(turns.RESET_WHILE_RUNNING)
            last_bridge = await self._storage.call(
                run_bridges.last_run_bridge, session_uuid=session_uuid
            )
            old_hermes_session = await store_or_refuse(
                self._storage,
                turns.mark_reset,
                session_uuid=session_uuid,
                user_id=user_id,
                check_running=self._reads.several_workers,  # another worker's run counts too
            )
        holder = self._bridges.holder(last_bridge=last_bridge, hermes_session=old_hermes_session)
        try:
            await self._bridges.client(holder).reset(old_hermes_session)
        except BridgeUnavailable:
            # The new hermes session id already gives the next run a fresh agent.
            log.warning("bridge unreachable on reset of %s; using a new agent", session_uuid)

    async def _bridge_of(self, run_id: str, live: ConsumedRun | None) -> BridgeClient:
        """The client of the bridge the run is pinned to (from the database when another
        worker consumes it)."""
        if live is not None:
            return self._bridges.client(live.bridge_url)
        pinned = await self._storage.call(run_bridges.pinned_run, run_id=run_id)
        return self._bridges.client(pinned.bridge_url if pinned else None)
