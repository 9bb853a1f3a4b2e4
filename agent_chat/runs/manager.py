"""The RunManager: the app's one entry to runs (docs/architecture.md).

Commands start, stop and answer runs; `subscribe(run_id, after_seq, user_id=)` is the one
way to follow a run (replay, then live, then the end) and `session_changes(user_id=)` the one
way to hear that a conversation started, stopped or began waiting. Browser tabs never own a
run: a `Consumer` task per run reads the bridge, stores every event and publishes it on the bus.

Every command and reader takes the acting `user_id`: another person's conversation or run
(by run id too) is refused exactly like a missing one (`UnknownRun`, or the store's "does not
exist"). What runs for the app itself (re-attaching, takeover, the consumer) has no user.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from agent_chat.config import Settings
from agent_chat.db import logs, messages, run_bridges, turns
from agent_chat.db.models import ChatMessage, MessageStatus
from agent_chat.db.running import RUN_ACTIVE, STILL_RUNNING, TOO_MANY_RUNS, too_many_runs
from agent_chat.db.turns import TurnMode, TurnPlan
from agent_chat.protocol.events import RunEvent
from agent_chat.protocol.log_codec import stored_events
from agent_chat.protocol.reducer import replay
from agent_chat.runs.awaiting import awaiting
from agent_chat.runs.bridge_model import bridge_model
from agent_chat.runs.bridges import BridgeSet, NoHealthyBridge
from agent_chat.runs.bus import LocalRunBus, RunBus, SessionChange
from agent_chat.runs.client import BridgeClient, BridgeError
from agent_chat.runs.consumed import BackgroundTasks, ConsumedRuns
from agent_chat.runs.consumer import BRIDGE_RESTARTED, FINAL_STATUS, ConsumedRun, Consumer
from agent_chat.runs.leases import HeldLeases, Lease, LeaseUnavailable, LocalLeases, RunLeases
from agent_chat.runs.memory_handover import MemoryHandover
from agent_chat.runs.placement import start_on_a_bridge
from agent_chat.runs.queueing import AgentPreparer, MessageQueue
from agent_chat.runs.rules import RunRefused, StartedRun, check_text, store_or_refuse
from agent_chat.runs.run_commands import RunCommands
from agent_chat.runs.run_reads import RunReads, UnknownRun
from agent_chat.runs.storage import Storage
from agent_chat.runs.takeover import TakeoverWatch
from agent_chat.skills import skill_prompt

__all__ = [
    "BRIDGE_RESTARTED",
    "ConsumedRun",
    "RunManager",
    "RunRefused",
    "StartedRun",
    "UnknownRun",
]

log = logging.getLogger(__name__)
CLOSE_WAIT_S = 10.0  # how long close() waits for the cancelled run tasks


class RunManager:
    """The runs' one entry, made of small collaborators: `consumed` (the runs this process
    consumes), `reads` (what goes on, following a run), `commands` (stop, answer, steer),
    `queued` (the message queue), `preparer` (agents built ahead) and the `consumer`. The
    manager itself starts runs and takes them over; the rest of its face is theirs."""

    def __init__(
        self,
        *,
        settings: Settings,
        storage: Storage,
        client: BridgeClient | None = None,
        bus: RunBus | None = None,
        leases: RunLeases | None = None,
        bridges: BridgeSet | None = None,
    ) -> None:
        self.settings = settings
        self.storage = storage
        if bridges is None:
            if client is None:
                raise ValueError("a RunManager needs a bridge client or a bridge set")
            bridges = BridgeSet([client])
        self.bridges = bridges  # every run goes to one of them and stays there
        self.client = bridges.first
        # Polls every bridge's health once (services/runtime.py gives the watch's check): asked when
        # no bridge is known healthy before a run is refused.
        self.recheck_bridges: Callable[[], Awaitable[Any]] | None = None
        self.bus: RunBus = bus or LocalRunBus()
        self.leases = HeldLeases(leases or LocalLeases())  # one consumer per run
        self.several_workers = (
            self.leases.leases.several_workers
        )  # several workers: runs may be another's
        self.consumed = ConsumedRuns()
        self.background = BackgroundTasks()
        self.start_lock = asyncio.Lock()  # held by services that change a quiet conversation
        self.memory_handover = MemoryHandover(storage=storage, client=self.client)
        self.reads = RunReads(
            storage=storage,
            bus=self.bus,
            consumed=self.consumed,
            several_workers=self.several_workers,
        )
        limit = settings.max_message_chars
        self.queued = MessageQueue(
            storage=storage,
            bus=self.bus,
            reads=self.reads,
            background=self.background,
            send=self.send,
            max_message_chars=limit,
        )
        self.consumer = Consumer(
            storage=storage,
            bridges=bridges,
            bus=self.bus,
            lock=self.start_lock,
            forget=lambda live: self.consumed.forget(live.run_id),
            give_back=lambda live: self.leases.give_back(live.run_id),
            on_finished=self.queued.send_next,
        )
        self.commands = RunCommands(
            storage=storage,
            bridges=bridges,
            consumer=self.consumer,
            reads=self.reads,
            consumed=self.consumed,
            lock=self.start_lock,
            max_message_chars=limit,
        )
        self.preparer = AgentPreparer(
            settings=settings,
            storage=storage,
            bridges=bridges,
            reads=self.reads,
            memory_handover=self.memory_handover,
            background=self.background,
        )
        self.writer = self.consumer.writer
        self.takeover = TakeoverWatch(
            storage=storage,
            followed=lambda run_id: run_id in self.consumed,
            reattach=self._reattach,
        )
        # The collaborators' calls, on the manager: the one object services/backend.py names.
        self.running_in = self.reads.running_in
        self.run_state = self.reads.run_state
        self.session_states = self.reads.session_states
        self.working_runs = self.reads.working_runs
        self.subscribe = self.reads.subscribe
        self.session_changes = self.reads.session_changes
        self.stop = self.commands.stop
        self.answer = self.commands.answer
        self.steer = self.commands.steer
        self.reset = self.commands.reset
        self.queue = self.queued.add
        self.prepare = self.preparer.prepare

    # ---- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Start the writer and re-attach to every run still going that no worker consumes."""
        await self.bus.start()
        self.writer.start()
        for message in await self.storage.call(messages.running_messages):
            await self._reattach(message)
        if self.leases.leases.several_workers:
            self.takeover.start()

    async def close(self) -> None:
        """Stop following runs (they go on in the bridge) and flush the logs."""
        await self.takeover.close()
        tasks = self.consumed.tasks() + self.background.tasks()
        for task in tasks:
            task.cancel()
        if tasks:
            # Bounded: a task that ignores its cancel must not keep the process from ending.
            done, stuck = await asyncio.wait(tasks, timeout=CLOSE_WAIT_S)
            for task in done:
                if not task.cancelled():
                    task.exception()  # retrieved, as gather(return_exceptions=True) did
            for task in stuck:
                where = "\n".join(awaiting(task))
                log.warning(
                    "run task %s did not stop within %.0f s: left behind at shutdown; at\n%s",
                    task.get_name(),
                    CLOSE_WAIT_S,
                    where,
                )
        await self.writer.close()
        await self.leases.release_all()  # another worker may take the runs over at once
        await self.bus.aclose()

    # ---- commands --------------------------------------------------------------------

    def validate_message(self, text: str) -> str:
        return check_text(text, limit=self.settings.max_message_chars)

    async def send(
        self,
        *,
        user_id: int,
        session_uuid: str,
        text: str,
        model_id: int | None = None,
        skill_folder: str | None = None,
        tool_profile: str | None = None,
        max_iterations: int | None = None,
        attachment_ids: tuple[int, ...] = (),
        content: str | list[dict[str, Any]] | None = None,
    ) -> StartedRun:
        """Append the user's message to the active branch and start a run answering it
        (`max_iterations`: the agent's step limit for this run, hermes' 90 by default).
        `attachment_ids` are linked to it in the turn's transaction; `content`, if given, is
        what the agent is sent instead of `text` (services/attachment_parts.py)."""
        self.validate_message(text)
        plan = TurnPlan(
            TurnMode.SEND, session_uuid, user_id, text, None, model_id, skill_folder, tool_profile
        )
        plan = replace(plan, attachment_ids=attachment_ids)
        return await self._start(plan, max_iterations=max_iterations, content=content)

    async def edit(
        self,
        *,
        user_id: int,
        session_uuid: str,
        message_id: int,
        text: str,
        attachment_ids: tuple[int, ...] = (),
        content: Any = None,
    ) -> StartedRun:
        """A new version of a user message (a sibling), answered from the same point; it
        carries `attachment_ids` (the old version's files) and the agent gets `content`."""
        self.validate_message(text)
        plan = TurnPlan(TurnMode.EDIT, session_uuid, user_id, text, message_id)
        return await self._start(replace(plan, attachment_ids=attachment_ids), content=content)

    async def regenerate(
        self, *, user_id: int, session_uuid: str, message_id: int, content: Any = None
    ) -> StartedRun:
        """A new version of an assistant message: the same question answered again
        (`content`: the question with its attachments, as `send` takes it)."""
        plan = TurnPlan(TurnMode.REGENERATE, session_uuid, user_id, message_id=message_id)
        return await self._start(plan, content=content)

    async def _start(
        self, plan: TurnPlan, *, max_iterations: int | None = None, content: Any = None
    ) -> StartedRun:
        await self.memory_handover.ensure()  # a pre-accounts memory goes to the first admin
        async with self.start_lock:
            if self.consumed.in_conversation(plan.session_uuid, plan.owner_id):
                raise RunRefused(STILL_RUNNING, RUN_ACTIVE)
            # The limit is per person (the bridge has its own cap for the whole machine).
            # Several workers: checked again in the turn's transaction (db/running.py), with
            # every worker's runs; here, this process's (all of them with one worker).
            working = self.consumed.working(plan.owner_id)
            limit = self.settings.max_active_runs
            if working >= limit:
                raise RunRefused(too_many_runs(working, limit), TOO_MANY_RUNS)
            run_id = uuid.uuid4().hex
            plan = replace(
                plan,
                enabled_profiles=self.settings.tool_profiles,
                max_active_runs=limit if self.several_workers else None,
            )
            # The conversation's last run's bridge, before this turn adds an unpinned one.
            last_bridge = await self.storage.call(
                run_bridges.last_run_bridge, session_uuid=plan.session_uuid
            )
            lease = await self._lease(run_id)  # before the answer is RUNNING: no takeover
            try:
                prepared = await store_or_refuse(
                    self.storage,
                    turns.prepare_turn,
                    plan=plan,
                    run_id=run_id,
                    skill_prompt=lambda folder: skill_prompt(self.settings.skills_dir, folder),
                )
            except BaseException as exc:
                await lease.release()
                if not isinstance(exc, SQLAlchemyError):
                    raise
                log.exception("could not store the new turn")
                raise RunRefused(
                    "The message could not be saved (the database is not writable right now), "
                    "so nothing was sent. Try again in a moment."
                ) from exc
            live = ConsumedRun(
                run_id,
                prepared.assistant_id,
                prepared.chat_session_id,
                plan.session_uuid,
                plan.owner_id,
            )
            self._follow(live, lease=lease)
        started = StartedRun(run_id, prepared.question_id, prepared.assistant_id)
        if not await self.consumer.prepare(live, plan, prepared):  # e.g. the workspace put back
            return started

        def send(client: BridgeClient) -> Awaitable[str]:
            return client.start_run(
                user_id=plan.owner_id,  # the agent works in its owner's hermes home (memory)
                session_id=prepared.hermes_session,
                message=prepared.text if content is None else content,
                history=prepared.history,
                model=bridge_model(prepared.model),
                system_prompt=prepared.system_prompt,
                run_id=run_id,
                tool_profile=prepared.tool_profile,
                mcp_servers=prepared.mcp_servers,
                max_iterations=max_iterations,
                workspace=plan.session_uuid,  # the conversation's folder survives a reset
            )

        def pinned(url: str) -> None:
            live.bridge_url = url

        try:
            await start_on_a_bridge(
                self.bridges,
                store=self.consumer.store_with_retry,
                message_id=prepared.assistant_id,
                last_bridge=last_bridge,
                hermes_session=prepared.hermes_session,
                send=send,
                recheck=self.recheck_bridges,
                pinned=pinned,
            )
        except NoHealthyBridge as exc:
            await self.consumer.finish(live, status=MessageStatus.FAILED, error=str(exc))
            return started
        except BridgeError as exc:
            # Nothing is lost: the question stays, the answer says why it did not come.
            await self.consumer.finish(
                live, status=MessageStatus.FAILED, error=f"Could not start the agent: {exc.message}"
            )
            return started
        live.task = asyncio.create_task(self.consumer.consume(live), name=f"run-{run_id}")
        return started

    def _follow(
        self, live: ConsumedRun, history: list[RunEvent] | None = None, *, lease: Lease
    ) -> None:
        """Register the run and open its channel (readers may subscribe from now on)."""
        self.consumed.add(live)
        self.leases.hold(lease, on_lost=lambda: self._lost(live))
        self.bus.open(live.run_id, history or ())
        self.bus.publish_session(
            SessionChange(live.session_uuid, live.session_state, live.owner_id)
        )

    async def _reattach(self, message: ChatMessage) -> None:
        if not message.run_id or message.run_id in self.consumed:
            return
        lease = await self.leases.leases.acquire(message.run_id)
        if lease is None:  # another worker consumes it
            return
        # The running answers were listed before the lease was free: their consumer may have
        # finished the run and released it in between. Then there is nothing to take over
        # (following it again would re-send its stream and finish it twice).
        now = await self.storage.call(messages.get_message, message_id=message.id)
        if now is None or now.status != MessageStatus.RUNNING.value:
            await lease.release()
            return
        rows = await self.storage.call(logs.list_logs, message_id=message.id)
        history = [e for r in rows for e in stored_events(r.seq, r.kind, r.content, r.meta_json)]
        session_uuid, owner_id = await self.storage.call(
            turns.session_and_owner, chat_session_id=message.session_id
        )
        view = replay([e.as_dict() for e in history])
        live = ConsumedRun(
            message.run_id, message.id, message.session_id, session_uuid, owner_id, view
        )
        live.bridge_url = message.bridge_url  # the run's bridge, as pinned when it started
        self._follow(live, history, lease=lease)
        if live.view.finished:
            # The log already holds the terminal event (the app stopped before finalising
            # the message): the bridge has nothing newer and may have dropped the run.
            await self.consumer.finish(live, status=FINAL_STATUS[live.view.state])
            return
        live.task = asyncio.create_task(self.consumer.consume(live), name=f"run-{live.run_id}")
        log.info("re-attached to run %s after seq %d", live.run_id, live.view.last_seq)

    # ---- the lease: one consumer per run (runs/leases.py) --------------------------------

    async def _lease(self, run_id: str) -> Lease:
        try:
            return await self.leases.acquire_new(run_id)
        except LeaseUnavailable as exc:
            raise RunRefused(f"Nothing was sent: {exc}") from exc

    def _lost(self, live: ConsumedRun) -> None:
        """Another worker took the run over (this one stalled): stop, finish nothing."""
        self.consumed.forget(live.run_id)
        self.leases.drop(live.run_id)
        if live.task is not None:
            live.task.cancel()
        self.writer.discard(live.message_id)
