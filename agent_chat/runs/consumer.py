"""Following one run: read the bridge's events, store them, publish them, finish once.

One `Consumer` task per run (the RunManager starts it). Each event is reduced into the
run's view, queued for the batch writer and published on the bus, in that order; the
outcome is stored once, then the run's channel closes, so a reader that sees the end finds
the finished message in the database.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import OperationalError, SQLAlchemyError

from agent_chat.db import logs, pauses, turns
from agent_chat.db.errors import StoreError
from agent_chat.db.models import MessageStatus
from agent_chat.db.turns import PreparedTurn, TurnPlan
from agent_chat.protocol.events import (
    PAUSE_REQUESTS,
    PAUSE_RESOLUTIONS,
    EventType,
    RunEvent,
    RunState,
)
from agent_chat.protocol.log_codec import LogRow, event_to_row
from agent_chat.protocol.reducer import RunView, apply
from agent_chat.runs.batch_writer import LogBatchWriter
from agent_chat.runs.bridges import BridgeSet
from agent_chat.runs.bus import RunBus, SessionChange
from agent_chat.runs.client import BridgeError, BridgeUnavailable, RunNotFound
from agent_chat.runs.storage import Storage

log = logging.getLogger(__name__)

FINAL_STATUS = {
    RunState.SUCCEEDED: MessageStatus.SUCCESS,
    RunState.FAILED: MessageStatus.FAILED,
    RunState.STOPPED: MessageStatus.STOPPED,
}
BRIDGE_RESTARTED = (
    "The agent service was restarted while this answer was being written, so the run was lost. "
    "Everything received until then is kept; send the question again to retry."
)
BRIDGE_LOST = (
    "The agent service at {url} stopped answering for more than {seconds:.0f} s while this "
    "answer was being written, so the run was lost. Everything received until then is kept; "
    "send the question again to retry."
)


@dataclass
class ConsumedRun:
    """A run the app is following."""

    run_id: str
    message_id: int
    chat_session_id: int
    session_uuid: str
    owner_id: int | None  # whose conversation (and run) it is
    view: RunView = field(default_factory=RunView)
    task: asyncio.Task | None = None
    bridge_url: str | None = None  # the bridge the run is pinned to (None: the first)

    @property
    def session_state(self) -> str:
        """The conversation's state for the sidebar: "waiting" or "running"."""
        return "waiting" if self.view.state == RunState.WAITING_INPUT else "running"


class Consumer:
    """The pipeline every followed run goes through (shared by all runs of a manager)."""

    def __init__(
        self,
        *,
        storage: Storage,
        bridges: BridgeSet,
        bus: RunBus,
        lock: asyncio.Lock,
        forget: Callable[[ConsumedRun], None],
        give_back: Callable[[ConsumedRun], None],
        on_finished: Callable[[ConsumedRun, MessageStatus], None] = lambda live, status: None,
    ) -> None:
        self.storage = storage
        self.bridges = bridges
        self.bus = bus
        self.writer = LogBatchWriter(self._write_logs)
        self._lock = lock  # the manager's start lock: a run finishes under it
        self._forget = forget  # drops the run from the manager's registry
        self._give_back = give_back  # releases its lease: another worker may take it then
        self._on_finished = on_finished  # e.g. sends the conversation's next queued message
        self.db_retry_s = 300.0  # how long a write waits out an unwritable database
        # Steps in a run's life, set by services/checkpoints.py:attach (the workspace put back
        # before a regenerate or an edit, recorded at every end). `before_send`: once the turn
        # is stored (the answer RUNNING: no other run of the conversation starts) and before
        # the bridge gets the run; if it raises, the answer fails with its words. Then
        # `before_finalise`: the run ended (any outcome), its outcome not stored yet (still
        # RUNNING); its failure is logged and the outcome stored all the same.
        self.before_send: Callable[[TurnPlan, PreparedTurn], Awaitable[None]] | None = None
        self.before_finalise: Callable[[ConsumedRun], Awaitable[None]] | None = None

    async def consume(self, live: ConsumedRun) -> None:
        client = self.bridges.client(live.bridge_url)
        try:
            async for event in client.events(
                live.run_id,
                last_event_id=live.view.last_seq,
                on_connection=lambda connected: self._publish_link(live, connected),
            ):
                await self.on_event(live, event)
                if event.is_terminal:
                    await self.finish(live, status=FINAL_STATUS[live.view.state])
                    return
        except asyncio.CancelledError:
            raise  # app shutdown: the run goes on in the bridge; re-attach on next start
        except RunNotFound:
            await self.finish(live, status=MessageStatus.FAILED, error=BRIDGE_RESTARTED)
        except BridgeUnavailable:  # no connection for longer than the set's bounded wait
            error = BRIDGE_LOST.format(url=client.base_url, seconds=self.bridges.down_after_s)
            await self.finish(live, status=MessageStatus.FAILED, error=error)
        except BridgeError as exc:
            await self.finish(live, status=MessageStatus.FAILED, error=exc.message)
        except Exception as exc:
            log.exception("following run %s failed", live.run_id)
            await self.finish(
                live,
                status=MessageStatus.FAILED,
                error=f"Internal error while following the run: {exc}",
            )

    async def prepare(self, live: ConsumedRun, plan: TurnPlan, prepared: PreparedTurn) -> bool:
        """`before_send` for a run just stored; False when it raised (the run is then
        finished as failed, with the exception's words, and never sent)."""
        if self.before_send is None:
            return True
        try:
            await self.before_send(plan, prepared)
        except Exception as exc:
            log.exception("preparing run %s failed", live.run_id)
            await self.finish(live, status=MessageStatus.FAILED, error=str(exc))
            return False
        return True

    def _publish_link(self, live: ConsumedRun, connected: bool) -> None:
        event = RunEvent(seq=0, type=EventType.BRIDGE_LINK, data={"connected": connected})
        live.view = apply(live.view, event.as_dict())
        self.bus.publish(live.run_id, event)

    async def on_event(self, live: ConsumedRun, event: RunEvent) -> None:
        was = live.session_state
        live.view = apply(live.view, event.as_dict())
        self.writer.add(live.message_id, event_to_row(event.type, event.seq, event.data))
        data = event.data
        if event.type in PAUSE_REQUESTS:
            approval = event.type == EventType.APPROVAL_REQUEST
            await self.store_with_retry(
                pauses.create_pause,
                run_id=live.run_id,
                message_id=live.message_id,
                clarify_id=str(data.get("clarify_id")),
                question=str((data.get("command") if approval else data.get("question")) or ""),
                choices=[str(c) for c in data.get("choices") or []],
                kind="approval" if approval else "clarify",
                detail=str(data.get("description") or "") if approval else None,
            )
            await self._flush_quietly()
        elif event.type in PAUSE_RESOLUTIONS and data.get("cancelled"):
            await self.store_with_retry(pauses.abandon_pauses, run_id=live.run_id)
        elif event.type in PAUSE_RESOLUTIONS:
            await self.store_with_retry(
                pauses.answer_pause,
                run_id=live.run_id,
                clarify_id=str(data.get("clarify_id")),
                answer=data.get("answer"),
            )
        self.bus.publish(live.run_id, event)
        if live.session_state != was:
            self.bus.publish_session(
                SessionChange(live.session_uuid, live.session_state, live.owner_id)
            )

    async def _flush_quietly(self) -> None:
        try:
            await self.writer.flush()
        except Exception:
            log.exception("log flush failed; the writer retries in the background")

    async def finish(
        self, live: ConsumedRun, *, status: MessageStatus, error: str | None = None
    ) -> None:
        """Store the outcome once, then end the run's channel and tell every reader."""
        if error and not live.view.finished:
            # The bridge sent no terminal event: the app's own ends the log, so the stored
            # log and every reader see the same end.
            ending = RunEvent(
                seq=live.view.last_seq + 1, type=EventType.RUN_FAILED, data={"error": error}
            )
            live.view = apply(live.view, ending.as_dict())
            self.writer.add(live.message_id, event_to_row(ending.type, ending.seq, ending.data))
            self.bus.publish(live.run_id, ending)
        view = live.view
        await self._flush_quietly()
        outcome = turns.Outcome(
            content=view.answer,
            status=status,
            error=error or view.error,
            usage=view.usage or {},
            summary=view.compactions[-1] if view.compactions else None,
        )
        if self.before_finalise is not None:
            try:
                await self.before_finalise(live)
            except Exception:
                log.exception("before finalising run %s", live.run_id)
        # Under the start lock, and out of the registry before the outcome is stored:
        # whoever sees the stored outcome also sees the run gone, and a send waits for the
        # lock, so its context already holds this answer.
        finalised: bool | None = None  # None: the write failed (it is retried on re-attach)
        async with self._lock:
            self._forget(live)
            try:
                finalised = await self.store_with_retry(
                    turns.finalise_run,
                    message_id=live.message_id,
                    run_id=live.run_id,
                    outcome=outcome,
                )
            except (StoreError, SQLAlchemyError):
                # Still RUNNING in the database: the next start re-attaches and finalises it
                # from the bridge's buffer or the stored terminal event.
                log.exception("finalising message %s failed", live.message_id)
            # Only now: with the lease free while the answer was still RUNNING, a takeover
            # watch (of any worker) would follow the run again and finish it twice.
            self._give_back(live)
        self.bus.close(live.run_id)
        self.bus.publish_session(SessionChange(live.session_uuid, "", live.owner_id))
        if finalised is not False:  # False: another consumer finished it (a takeover race)
            self._on_finished(live, status)

    async def store_with_retry(self, fn: Callable[..., Any], /, **kwargs: Any) -> Any:
        """A store call that outlasts a briefly unwritable database (locked, restarting)."""
        delay, waited = 0.2, 0.0
        while True:
            try:
                return await self.storage.call(fn, **kwargs)
            except OperationalError:
                if waited >= self.db_retry_s:
                    raise
                log.warning(
                    "database busy or unreachable; retrying %s in %.1f s", fn.__name__, delay
                )
                await asyncio.sleep(delay)
                waited += delay
                delay = min(delay * 2, 5.0)

    def _write_logs(self, batch: dict[int, list[LogRow]]) -> None:
        def write(*, session: Any) -> None:
            for message_id, rows in batch.items():
                logs.append_logs(session=session, message_id=message_id, rows=rows)

        self.storage.call_sync(write)
