"""The RunManager: the app's one entry to runs (docs/architecture.md).

Commands start, stop and answer runs; `subscribe(run_id, after_seq)` is the one way to
follow a run (replay, then live, then the end) and `session_changes()` the one way to hear
that a conversation started, stopped or began waiting. Browser tabs never own a run: a
`Consumer` task per run reads the bridge, stores every event and publishes it on the bus.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from agent_chat.config import Settings
from agent_chat.db import messages, queue, turns
from agent_chat.db.models import ChatMessage, MessageStatus
from agent_chat.db.turns import TurnMode, TurnPlan
from agent_chat.protocol.events import RunEvent
from agent_chat.runs.attach import reattach
from agent_chat.runs.bridge_model import bridge_model
from agent_chat.runs.bus import LocalRunBus, RunBus, SessionChange, SessionChanges
from agent_chat.runs.client import BridgeClient, BridgeError, BridgeUnavailable, RunNotFound
from agent_chat.runs.consumer import BRIDGE_RESTARTED, Consumer, LiveRun
from agent_chat.runs.leases import HeldLeases, Lease, LeaseUnavailable, LocalLeases, RunLeases
from agent_chat.runs.memory_handover import SharedMemoryHandover
from agent_chat.runs.replay import StoredReplay
from agent_chat.runs.storage import Storage
from agent_chat.runs.takeover import TakeoverWatch
from agent_chat.skills import skill_prompt

__all__ = ["BRIDGE_RESTARTED", "LiveRun", "RunManager", "RunRefused", "StartedRun"]

log = logging.getLogger(__name__)


class RunRefused(Exception):
    """A run could not be started; the message says why, for the person."""


@dataclass(frozen=True)
class StartedRun:
    run_id: str
    user_message_id: int
    assistant_message_id: int


class RunManager:
    def __init__(
        self,
        *,
        settings: Settings,
        storage: Storage,
        client: BridgeClient,
        bus: RunBus | None = None,
        leases: RunLeases | None = None,
    ) -> None:
        self.settings = settings
        self.storage = storage
        self.client = client
        self.bus: RunBus = bus or LocalRunBus()
        self.leases = HeldLeases(leases or LocalLeases())  # one consumer per run
        self._runs: dict[str, LiveRun] = {}
        self._lock = asyncio.Lock()
        self.consumer = Consumer(
            storage=storage,
            client=client,
            bus=self.bus,
            lock=self._lock,
            forget=self._forget,
            on_finished=self._send_next_queued,
        )
        self._background_tasks: set[asyncio.Task] = set()
        self.writer = self.consumer.writer
        self.takeover = TakeoverWatch(
            storage=storage, followed=lambda run_id: run_id in self._runs, reattach=self._reattach
        )
        self.shared_memory = SharedMemoryHandover(storage=storage, client=client)

    # ---- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Start the writer and re-attach to every run still going that no worker consumes."""
        await self.bus.start()
        self.writer.start()
        for message in await self.storage.call(messages.running_messages):
            await self._reattach(message)
        if self.leases.leases.shared:
            self.takeover.start()

    async def close(self) -> None:
        """Stop following runs (they go on in the bridge) and flush the logs."""
        await self.takeover.close()
        tasks = [r.task for r in self._runs.values() if r.task] + list(self._background_tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.writer.close()
        await self.leases.release_all()  # another worker may take the runs over at once
        await self.bus.aclose()

    # ---- following runs --------------------------------------------------------------

    def live(self, run_id: str | None) -> LiveRun | None:
        return self._runs.get(run_id) if run_id else None

    def live_for_session(self, session_uuid: str) -> LiveRun | None:
        return next((r for r in self._runs.values() if r.session_uuid == session_uuid), None)

    def subscribe(self, run_id: str, after_seq: int = 0) -> StoredReplay:
        """The run's events after `after_seq`: what happened so far, then live events as
        they come, ending after the last one. A run that is over (or unknown here) is
        replayed from the stored log."""
        live = self.bus.subscribe(run_id, after_seq)
        return live if live is not None else StoredReplay(self.storage, run_id, after_seq)

    def session_changes(self) -> SessionChanges:
        """Every conversation's run-state changes from now on (close it when done)."""
        return self.bus.session_changes()

    def session_states(self) -> dict[str, str]:
        """session_uuid -> "running" | "waiting" for every followed run."""
        return {r.session_uuid: r.session_state for r in self._runs.values()}

    # ---- commands --------------------------------------------------------------------

    def validate_message(self, text: str) -> str:
        if not text or not text.strip():
            raise RunRefused("Type a message first: an empty message is not sent.")
        limit = self.settings.max_message_chars
        if len(text) > limit:
            raise RunRefused(
                f"The message has {len(text):,} characters; the limit is {limit:,}. "
                "Shorten it or split it into several messages."
            )
        return text

    async def send(
        self,
        *,
        session_uuid: str,
        text: str,
        model_id: int | None = None,
        skill_folder: str | None = None,
        tool_profile: str | None = None,
        max_iterations: int | None = None,
        user_id: int,
    ) -> StartedRun:
        """Append the user's message to the active branch and start a run answering it
        (`max_iterations`: the agent's step limit for this run, hermes' 90 by default)."""
        self.validate_message(text)
        plan = TurnPlan(
            TurnMode.SEND, session_uuid, text, None, model_id, skill_folder, tool_profile
        )
        return await self._start(plan, max_iterations=max_iterations, user_id=user_id)

    async def edit(
        self, *, session_uuid: str, message_id: int, text: str, user_id: int
    ) -> StartedRun:
        """A new version of a user message (a sibling), answered from the same point."""
        self.validate_message(text)
        plan = TurnPlan(TurnMode.EDIT, session_uuid, text, message_id)
        return await self._start(plan, user_id=user_id)

    async def regenerate(self, *, session_uuid: str, message_id: int, user_id: int) -> StartedRun:
        """A new version of an assistant message: the same question answered again."""
        plan = TurnPlan(TurnMode.REGENERATE, session_uuid, message_id=message_id)
        return await self._start(plan, user_id=user_id)

    async def reset(self, *, session_uuid: str) -> None:
        """Give the session a fresh agent and add a RESET marker: later runs see nothing above it."""
        async with self._lock:
            if self.live_for_session(session_uuid):
                raise RunRefused(
                    "The conversation is running: stop it before resetting the context."
                )
            old_hermes_session = await self._store(turns.mark_reset, session_uuid=session_uuid)
        try:
            await self.client.reset(old_hermes_session)
        except BridgeUnavailable:
            # The new hermes session id already gives the next run a fresh agent.
            log.warning("bridge unreachable on reset of %s; using a new agent", session_uuid)

    async def stop(self, run_id: str) -> None:
        live = self._runs.get(run_id)
        if live is None:
            return
        try:
            await self.client.stop(run_id)
        except RunNotFound:
            if live.task:
                live.task.cancel()
            await self.consumer.finish(live, status=MessageStatus.FAILED, error=BRIDGE_RESTARTED)

    async def answer(self, run_id: str, clarify_id: str, answer: str) -> None:
        await self.client.answer_clarify(run_id, clarify_id, answer)

    def prepare(
        self,
        session_uuid: str,
        *,
        model_id: int | None = None,
        tool_profile: str | None = None,
        draft_hermes_session: str | None = None,
        user_id: int,
    ) -> None:
        """Have the bridge build the agent the conversation's next message needs, in the
        background (a conversation was opened, or its model or tools changed), so that
        message starts at once. Best effort: a failure only means the run builds it.
        `draft_hermes_session`: a new conversation, created by its first message."""
        if self.live_for_session(session_uuid) is not None:
            return
        work = self._prepare(session_uuid, model_id, tool_profile, draft_hermes_session, user_id)
        self._in_background(work, "prepare-agent")

    async def _prepare(
        self,
        session_uuid: str,
        model_id: int | None,
        tool_profile: str | None,
        draft_hermes_session: str | None,
        user_id: int,
    ) -> None:
        await self.shared_memory.ensure()
        try:
            target = await self.storage.call(
                turns.agent_target,
                session_uuid=session_uuid,
                model_id=model_id,
                tool_profile=tool_profile,
                enabled_profiles=self.settings.tool_profiles,
                draft_hermes_session=draft_hermes_session,
            )
            await self.client.prepare(
                target.hermes_session,
                bridge_model(target.model),
                target.tool_profile,
                user_id=user_id,
            )
        except (turns.Refused, BridgeError, SQLAlchemyError) as exc:
            log.debug("preparing the agent of %s skipped: %s", session_uuid, exc)

    async def steer(self, run_id: str, text: str) -> None:
        """Guidance for the running agent, added to its next tool result."""
        self.validate_message(text)
        await self.client.steer(run_id, text)

    # ---- the queue: messages sent one after another as runs end ------------------------

    async def queue(
        self, *, session_uuid: str, text: str, user_id: int, **choices: Any
    ) -> StartedRun | None:
        """Queue a message behind the conversation's run; sent at once (the StartedRun) when
        no run works any more."""
        self.validate_message(text)
        await self._store(queue.add_queued, session_uuid=session_uuid, content=text, **choices)
        if self.live_for_session(session_uuid) is None:
            return await self._send_queued(session_uuid, user_id)
        self.bus.publish_session(SessionChange(session_uuid, "running"))  # tabs show it
        return None

    def _send_next_queued(self, live: LiveRun, status: MessageStatus) -> None:
        # A stop holds the queue: the person took control. Otherwise the next one goes.
        # (A run re-attached after a restart has no known person yet: its queue waits for
        # the next send, until conversations have an owner.)
        if status == MessageStatus.STOPPED or live.user_id is None:
            return
        self._in_background(self._send_queued(live.session_uuid, live.user_id), "send-queued")

    def _in_background(self, work: Any, name: str) -> None:
        # Kept until done (close() waits for them): asyncio holds tasks only weakly.
        task = asyncio.create_task(work, name=name)
        self._background_tasks.add(task)
        task.add_done_callback(self._background_tasks.discard)

    async def _send_queued(self, session_uuid: str, user_id: int) -> StartedRun | None:
        queued = await self._store(queue.pop_queued, session_uuid=session_uuid)
        if queued is None:
            return None
        try:
            return await self.send(
                session_uuid=session_uuid,
                text=queued.content,
                model_id=queued.model_id,
                skill_folder=queued.skill_folder,
                tool_profile=queued.tool_profile,
                user_id=user_id,
            )
        except RunRefused as exc:
            # Back in its place at the front of the queue; it goes after the next run.
            log.warning("a queued message of %s could not start: %s", session_uuid, exc)
            await self._store(queue.put_back, queued=queued)
            return None

    async def _store(self, fn: Any, /, **kwargs: Any) -> Any:
        """A store call whose refusal is the person's message."""
        try:
            return await self.storage.call(fn, **kwargs)
        except turns.Refused as exc:
            raise RunRefused(str(exc)) from exc

    async def _start(
        self, plan: TurnPlan, *, user_id: int, max_iterations: int | None = None
    ) -> StartedRun:
        # user_id: whose hermes home (memory) the agent works in; the caller's for now.
        await self.shared_memory.ensure()
        async with self._lock:
            if self.live_for_session(plan.session_uuid):
                raise RunRefused(
                    "This conversation is still running. Wait for the answer or stop it first."
                )
            working = sum(1 for r in self._runs.values() if r.session_state == "running")
            limit = self.settings.max_active_runs
            if working >= limit:
                raise RunRefused(
                    f"{working} conversation{'s are' if working != 1 else ' is'} already "
                    f"running, the limit is {limit}. Wait for one to finish or stop one."
                )
            run_id = uuid.uuid4().hex
            plan = replace(plan, enabled_profiles=self.settings.tool_profiles)
            lease = await self._lease(run_id)  # before the answer is RUNNING: no takeover
            try:
                prepared = await self._store(
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
            live = LiveRun(
                run_id, prepared.assistant_id, prepared.chat_session_id, plan.session_uuid
            )
            live.user_id = user_id
            self._follow(live, lease=lease)
        started = StartedRun(run_id, prepared.user_id, prepared.assistant_id)
        try:
            await self.client.start_run(
                user_id=user_id,
                session_id=prepared.hermes_session,
                message=prepared.text,
                history=prepared.history,
                model=bridge_model(prepared.model),
                system_prompt=prepared.system_prompt,
                run_id=run_id,
                tool_profile=prepared.tool_profile,
                max_iterations=max_iterations,
                workspace=plan.session_uuid,  # the conversation's folder survives a reset
            )
        except BridgeError as exc:
            # Nothing is lost: the question stays, the answer says why it did not come.
            await self.consumer.finish(
                live, status=MessageStatus.FAILED, error=f"Could not start the agent: {exc.message}"
            )
            return started
        live.task = asyncio.create_task(self.consumer.consume(live), name=f"run-{run_id}")
        return started

    def _follow(
        self, live: LiveRun, history: list[RunEvent] | None = None, *, lease: Lease
    ) -> None:
        """Register the run and open its channel (readers may subscribe from now on)."""
        self._runs[live.run_id] = live
        self.leases.hold(lease, on_lost=lambda: self._lost(live))
        self.bus.open(live.run_id, history or ())
        self.bus.publish_session(SessionChange(live.session_uuid, live.session_state))

    async def _reattach(self, message: ChatMessage) -> None:
        await reattach(self, message)

    # ---- the lease: one consumer per run (runs/leases.py) --------------------------------

    async def _lease(self, run_id: str) -> Lease:
        try:
            return await self.leases.acquire_new(run_id)
        except LeaseUnavailable as exc:
            raise RunRefused(f"Nothing was sent: {exc}") from exc

    def _forget(self, live: LiveRun) -> None:
        self._runs.pop(live.run_id, None)
        self.leases.give_back(live.run_id)

    def _lost(self, live: LiveRun) -> None:
        """Another worker took the run over (this one stalled): stop, finish nothing."""
        self._runs.pop(live.run_id, None)
        self.leases.drop(live.run_id)
        if live.task is not None:
            live.task.cancel()
        self.writer.discard(live.message_id)
