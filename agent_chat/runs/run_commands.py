"""The RunManager's commands on a running run: stop, answer (a question or an approval),
steer. Each goes to the bridge the run is pinned to (`chat_message.bridge_url`: the live
run's here, the database's when another worker consumes it). A mixin of `RunManager`
(runs/manager.py), which gives it `storage`, `bridges`, `consumer`, `_owned` and
`validate_message`."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from agent_chat.db import run_bridges
from agent_chat.db.models import MessageStatus
from agent_chat.runs.bridges import BridgeSet
from agent_chat.runs.client import BridgeClient, RunNotFound
from agent_chat.runs.consumer import BRIDGE_RESTARTED, Consumer, LiveRun
from agent_chat.runs.storage import Storage


class RunCommands:
    # Given by RunManager.
    storage: Storage
    bridges: BridgeSet
    consumer: Consumer
    _owned: Callable[..., Awaitable[LiveRun | None]]
    validate_message: Callable[[str], Any]

    async def stop(self, run_id: str, *, user_id: int) -> None:
        """Stop `user_id`'s run (nothing to do when it is over)."""
        live = await self._owned(run_id, user_id)
        if live is None:  # over, or consumed by another worker: stop it on its bridge
            pinned = await self.storage.call(run_bridges.pinned_run, run_id=run_id)
            if pinned is not None and pinned.status == MessageStatus.RUNNING.value:
                with contextlib.suppress(RunNotFound):  # its consumer ends it
                    await self.bridges.client(pinned.bridge_url).stop(run_id)
            return
        try:
            await self.bridges.client(live.bridge_url).stop(run_id)
        except RunNotFound:
            if live.task:
                live.task.cancel()
            await self.consumer.finish(live, status=MessageStatus.FAILED, error=BRIDGE_RESTARTED)

    async def answer(self, run_id: str, clarify_id: str, answer: str, *, user_id: int) -> None:
        """Answer a question (or approval) of `user_id`'s run."""
        bridge = await self._bridge_of(run_id, await self._owned(run_id, user_id))
        await bridge.answer_clarify(run_id, clarify_id, answer)

    async def steer(self, run_id: str, text: str, *, user_id: int) -> None:
        """Guidance for `user_id`'s running agent, added to its next tool result."""
        self.validate_message(text)
        bridge = await self._bridge_of(run_id, await self._owned(run_id, user_id))
        await bridge.steer(run_id, text)

    async def _bridge_of(self, run_id: str, live: LiveRun | None) -> BridgeClient:
        """The client of the bridge the run is pinned to (from the database when another
        worker consumes it)."""
        if live is not None:
            return self.bridges.client(live.bridge_url)
        pinned = await self.storage.call(run_bridges.pinned_run, run_id=run_id)
        return self.bridges.client(pinned.bridge_url if pinned else None)
