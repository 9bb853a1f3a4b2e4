"""The RunManager: owns every run's lifetime in the app process (DESIGN.md §5).

Browser tabs never own a run: they read `LiveRun.view` and wait for `LiveRun.changed()`.
One consumer task per run reads the bridge's event stream, reduces it into the view,
persists it through the batch writer and finalises the assistant message.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import OperationalError, SQLAlchemyError

from agent_chat.config import Settings
from agent_chat.db import logs, messages, model_configs, pauses, sessions
from agent_chat.db.errors import StoreError
from agent_chat.db.logs import LogRow
from agent_chat.db.models import ChatMessage, ChatSession, MessageRole, MessageStatus
from agent_chat.protocol.events import EventType, RunState
from agent_chat.protocol.log_codec import event_to_row, row_to_event
from agent_chat.protocol.reducer import RunView, apply, replay
from agent_chat.runs.batch_writer import LogBatchWriter
from agent_chat.runs.client import (
    BridgeClient,
    BridgeError,
    BridgeEvent,
    BridgeUnavailable,
    RunNotFound,
)
from agent_chat.runs.storage import Storage
from agent_chat.skills import skill_prompt

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


class RunRefused(Exception):
    """A run could not be started; the message says why, for the person."""


@dataclass
class LiveRun:
    """A run the app is following, and the tabs' window onto it."""

    run_id: str
    message_id: int
    chat_session_id: int
    session_uuid: str
    view: RunView = field(default_factory=RunView)
    reconnecting: bool = False
    task: asyncio.Task | None = None
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def bump(self) -> None:
        # Waiters hold the old event; a fresh one catches the next change.
        old, self._changed = self._changed, asyncio.Event()
        old.set()

    async def wait_changed(self, timeout: float) -> bool:
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
            return True
        except TimeoutError:
            return False


@dataclass(frozen=True)
class TurnPlan:
    """What to start: a new message ("send"), a new version of a user message ("edit") or of
    an answer ("regenerate")."""

    mode: str
    session_uuid: str
    text: str = ""
    message_id: int | None = None
    model_id: int | None = None
    skill_folder: str | None = None


@dataclass(frozen=True)
class PreparedTurn:
    chat_session_id: int
    hermes_session: str
    text: str
    history: list[dict[str, str]]
    model: dict[str, Any]
    system_prompt: str | None
    user_id: int
    assistant_id: int


@dataclass(frozen=True)
class StartedRun:
    run_id: str
    user_message_id: int
    assistant_message_id: int


def _public_model(model: Any) -> dict[str, Any]:
    body = {"base_url": model.base_url, "api_key": model.api_key or "", "model": model.model_name}
    if model.context_length:
        body["context_length"] = model.context_length
        # hermes' "custom" provider asks for 65,536 output tokens unless told otherwise, more
        # than a small window holds; an eighth of the window leaves room for the context.
        body["max_tokens"] = max(1024, model.context_length // 8)
    return body


class RunManager:
    def __init__(self, *, settings: Settings, storage: Storage, client: BridgeClient) -> None:
        self.settings = settings
        self.storage = storage
        self.client = client
        self.writer = LogBatchWriter(self._write_logs)
        self._runs: dict[str, LiveRun] = {}
        self._lock = asyncio.Lock()
        self._activity = asyncio.Event()
        self._session_versions: dict[str, int] = {}
        self.db_retry_s = 300.0  # how long a write waits out an unwritable database

    # ---- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Start the writer and re-attach to every run the database says is still going."""
        self.writer.start()
        running = await self.storage.call(messages.running_messages)
        for message in running:
            await self._reattach(message)

    async def close(self) -> None:
        """Stop following runs (they go on in the bridge) and flush the logs."""
        tasks = [r.task for r in self._runs.values() if r.task]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.writer.close()

    # ---- queries for the UI ----------------------------------------------------------

    def live(self, run_id: str | None) -> LiveRun | None:
        return self._runs.get(run_id) if run_id else None

    def live_for_session(self, session_uuid: str) -> LiveRun | None:
        return next((r for r in self._runs.values() if r.session_uuid == session_uuid), None)

    def session_states(self) -> dict[str, str]:
        """session_uuid -> "running" | "waiting" for every followed run."""
        return {
            r.session_uuid: "waiting" if r.view.state == RunState.WAITING_INPUT else "running"
            for r in self._runs.values()
        }

    async def wait_activity(self, timeout: float) -> bool:
        """Wait until a run starts, ends, or starts/stops waiting for an answer."""
        try:
            await asyncio.wait_for(self._activity.wait(), timeout)
            return True
        except TimeoutError:
            return False

    def session_version(self, session_uuid: str) -> int:
        """Grows each time a run of this session starts, ends or starts/stops waiting."""
        return self._session_versions.get(session_uuid, 0)

    def _signal_activity(self, session_uuid: str) -> None:
        self._session_versions[session_uuid] = self._session_versions.get(session_uuid, 0) + 1
        self._activity.set()
        self._activity = asyncio.Event()

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
    ) -> StartedRun:
        """Append the user's message to the active branch and start a run answering it."""
        self.validate_message(text)
        return await self._start(
            TurnPlan("send", session_uuid, text=text, model_id=model_id, skill_folder=skill_folder)
        )

    async def edit(self, *, session_uuid: str, message_id: int, text: str) -> StartedRun:
        """A new version of a user message (a sibling), answered from the same point."""
        self.validate_message(text)
        return await self._start(TurnPlan("edit", session_uuid, text=text, message_id=message_id))

    async def regenerate(self, *, session_uuid: str, message_id: int) -> StartedRun:
        """A new version of an assistant message: the same question answered again."""
        return await self._start(TurnPlan("regenerate", session_uuid, message_id=message_id))

    async def reset(self, *, session_uuid: str) -> None:
        """Give the session a fresh agent and add a RESET marker: later runs see nothing above it."""
        async with self._lock:
            if self.live_for_session(session_uuid):
                raise RunRefused(
                    "The conversation is running: stop it before resetting the context."
                )
            old_hermes_session = await self.storage.call(_mark_reset, session_uuid=session_uuid)
        try:
            await self.client.reset(old_hermes_session)
        except BridgeUnavailable:
            # The new hermes session id already gives the next run a fresh agent.
            log.warning(
                "bridge unreachable on reset of %s; continuing with a new agent session",
                session_uuid,
            )

    async def _start(self, plan: TurnPlan) -> StartedRun:
        async with self._lock:
            if self.live_for_session(plan.session_uuid):
                raise RunRefused(
                    "This conversation is still running. Wait for the answer or stop it first."
                )
            working = sum(1 for r in self._runs.values() if r.view.state != RunState.WAITING_INPUT)
            if working >= self.settings.max_active_runs:
                raise RunRefused(
                    f"{working} conversation{'s are' if working != 1 else ' is'} already running, the limit is "
                    f"{self.settings.max_active_runs}. Wait for one to finish or stop one."
                )
            run_id = uuid.uuid4().hex
            try:
                prepared = await self.storage.call(self._prepare_turn, plan=plan, run_id=run_id)
            except SQLAlchemyError as exc:
                log.exception("could not store the new turn")
                raise RunRefused(
                    "The message could not be saved (the database is not writable right now), "
                    "so nothing was sent. Try again in a moment."
                ) from exc
            live = LiveRun(
                run_id=run_id,
                message_id=prepared.assistant_id,
                chat_session_id=prepared.chat_session_id,
                session_uuid=plan.session_uuid,
            )
            self._runs[run_id] = live
        self._signal_activity(plan.session_uuid)
        started = StartedRun(run_id, prepared.user_id, prepared.assistant_id)
        try:
            await self.client.start_run(
                session_id=prepared.hermes_session,
                message=prepared.text,
                history=prepared.history,
                model=prepared.model,
                system_prompt=prepared.system_prompt,
                run_id=run_id,
            )
        except BridgeError as exc:
            # Nothing is lost: the question stays, the answer says why it did not come.
            await self._finish(
                live, status=MessageStatus.FAILED, error=f"Could not start the agent: {exc.message}"
            )
            return started
        live.task = asyncio.create_task(self._consume(live), name=f"run-{run_id}")
        return started

    def _prepare_turn(self, *, session: Any, plan: TurnPlan, run_id: str) -> PreparedTurn:
        """Write the turn's messages (one transaction) and gather what the bridge needs."""
        chat = _existing_chat(session, plan.session_uuid)
        model = _resolve_model(session, plan.model_id, chat.model_id)
        skill_folder = plan.skill_folder if plan.mode == "send" else chat.skill_folder
        system_prompt = None
        if skill_folder:
            try:
                system_prompt = skill_prompt(self.settings.skills_dir, skill_folder)
            except (OSError, ValueError) as exc:
                raise RunRefused(str(exc)) from exc
        text = plan.text
        if plan.mode == "send":
            branch = messages.active_branch(session=session, chat_session_id=chat.id)
            parent_id = branch[-1].id if branch else None
            user = None
        elif plan.mode == "edit":
            original = _own_message(session, chat.id, plan.message_id, MessageRole.USER)
            parent_id, user = original.parent_id, None
        else:  # regenerate: the same question, a new answer beside the old one
            original = _own_message(session, chat.id, plan.message_id, MessageRole.ASSISTANT)
            user = _own_message(session, chat.id, original.parent_id, MessageRole.USER)
            parent_id, text = user.parent_id, user.content
        history = messages.history_for(
            session=session, chat_session_id=chat.id, parent_id=parent_id
        )
        if user is None:
            user = messages.append_message(
                session=session,
                chat_session_id=chat.id,
                parent_id=parent_id,
                role=MessageRole.USER,
                content=text,
                status=MessageStatus.SENT,
                model_id=model.id,
                skill_folder=skill_folder,
            )
        assistant = messages.append_message(
            session=session,
            chat_session_id=chat.id,
            parent_id=user.id,
            role=MessageRole.ASSISTANT,
            content="",
            status=MessageStatus.RUNNING,
            run_id=run_id,
            model_id=model.id,
            skill_folder=skill_folder,
        )
        sessions.set_title_if_empty(session=session, session_id=chat.id, text=text)
        sessions.set_session_model(
            session=session, session_id=chat.id, model_id=model.id, skill_folder=skill_folder
        )
        return PreparedTurn(
            chat_session_id=chat.id,
            hermes_session=chat.hermes_session,
            text=text,
            history=history,
            model=_public_model(model),
            system_prompt=system_prompt,
            user_id=user.id,
            assistant_id=assistant.id,
        )

    async def stop(self, run_id: str) -> None:
        live = self._runs.get(run_id)
        if live is None:
            return
        try:
            await self.client.stop(run_id)
        except RunNotFound:
            if live.task:
                live.task.cancel()
            await self._finish(live, status=MessageStatus.FAILED, error=BRIDGE_RESTARTED)

    async def answer(self, run_id: str, clarify_id: str, answer: str) -> None:
        await self.client.answer_clarify(run_id, clarify_id, answer)

    # ---- the consumer ----------------------------------------------------------------

    async def _reattach(self, message: ChatMessage) -> None:
        if not message.run_id or message.run_id in self._runs:
            return
        rows = await self.storage.call(logs.list_logs, message_id=message.id)
        view = replay([row_to_event(r.seq, r.kind, r.content, r.meta_json) for r in rows])
        chat = await self.storage.call(_session_by_id, chat_session_id=message.session_id)
        live = LiveRun(
            run_id=message.run_id,
            message_id=message.id,
            chat_session_id=message.session_id,
            session_uuid=chat.session_uuid if chat else "",
            view=view,
        )
        self._runs[live.run_id] = live
        if view.finished:
            # The log already holds the terminal event (the app stopped before finalising
            # the message): the bridge has nothing newer and may have dropped the run.
            await self._finish(live, status=FINAL_STATUS[view.state])
            return
        live.task = asyncio.create_task(self._consume(live), name=f"run-{live.run_id}")
        log.info("re-attached to run %s after seq %d", live.run_id, view.last_seq)

    def _on_connection(self, live: LiveRun):
        def report(connected: bool) -> None:
            live.reconnecting = not connected
            live.bump()

        return report

    async def _consume(self, live: LiveRun) -> None:
        try:
            async for event in self.client.events(
                live.run_id,
                last_event_id=live.view.last_seq,
                on_connection=self._on_connection(live),
            ):
                await self._on_event(live, event)
                if event.is_terminal:
                    await self._finish(live, status=FINAL_STATUS[live.view.state])
                    return
        except asyncio.CancelledError:
            raise  # app shutdown: the run goes on in the bridge; re-attach on next start
        except RunNotFound:
            await self._finish(live, status=MessageStatus.FAILED, error=BRIDGE_RESTARTED)
        except BridgeError as exc:
            await self._finish(live, status=MessageStatus.FAILED, error=exc.message)
        except Exception as exc:
            log.exception("following run %s failed", live.run_id)
            await self._finish(
                live,
                status=MessageStatus.FAILED,
                error=f"Internal error while following the run: {exc}",
            )

    async def _on_event(self, live: LiveRun, event: BridgeEvent) -> None:
        was_waiting = live.view.state == RunState.WAITING_INPUT
        live.view = apply(live.view, {"type": event.type, "seq": event.seq, **event.data})
        self.writer.add(live.message_id, event_to_row(event.type, event.seq, event.data))
        if event.type == EventType.CLARIFY_REQUEST:
            await self._store_with_retry(
                pauses.create_pause,
                run_id=live.run_id,
                message_id=live.message_id,
                clarify_id=str(event.data.get("clarify_id")),
                question=str(event.data.get("question") or ""),
                choices=[str(c) for c in event.data.get("choices") or []],
            )
            await self._flush_quietly()
        elif event.type == EventType.CLARIFY_RESOLVED and event.data.get("cancelled"):
            await self._store_with_retry(pauses.abandon_pauses, run_id=live.run_id)
        elif event.type == EventType.CLARIFY_RESOLVED:
            await self._store_with_retry(
                pauses.answer_pause,
                run_id=live.run_id,
                clarify_id=str(event.data.get("clarify_id")),
                answer=event.data.get("answer"),
            )
        live.bump()
        if was_waiting != (live.view.state == RunState.WAITING_INPUT):
            self._signal_activity(live.session_uuid)

    async def _flush_quietly(self) -> None:
        try:
            await self.writer.flush()
        except Exception:
            log.exception("log flush failed; the writer retries in the background")

    async def _finish(
        self, live: LiveRun, *, status: MessageStatus, error: str | None = None
    ) -> None:
        """Persist the outcome and stop following the run."""
        view = live.view
        await self._flush_quietly()
        usage = view.usage or {}
        # Under the start lock, and out of `_runs` before the outcome is stored: whoever
        # sees the stored outcome also sees the run gone, and a send waits for the lock, so
        # its context already holds this answer.
        async with self._lock:
            self._runs.pop(live.run_id, None)
            try:
                await self._store_with_retry(
                    _finalise,
                    message_id=live.message_id,
                    run_id=live.run_id,
                    content=view.answer,
                    status=status,
                    error=error or view.error,
                    usage=usage,
                    summary=view.compactions[-1] if view.compactions else None,
                    abandon_questions=status != MessageStatus.SUCCESS,
                )
            except (StoreError, SQLAlchemyError):
                # Still RUNNING in the database: the next start re-attaches and finalises it
                # from the bridge's buffer or the stored terminal event.
                log.exception("finalising message %s failed", live.message_id)
            if error and not view.finished:
                live.view = apply(view, {"type": EventType.RUN_FAILED, "error": error})
        live.reconnecting = False
        live.bump()
        self._signal_activity(live.session_uuid)

    async def _store_with_retry(self, fn: Any, /, **kwargs: Any) -> Any:
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


def _finalise(
    *,
    session: Any,
    message_id: int,
    run_id: str,
    content: str,
    status: MessageStatus,
    error: str | None,
    usage: dict[str, int],
    summary: str | None,
    abandon_questions: bool,
) -> None:
    """The run's outcome in one transaction: the answer, a compaction summary, open questions."""
    messages.finish_message(
        session=session,
        message_id=message_id,
        content=content,
        status=status,
        error=error,
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        total_tokens=usage.get("total_tokens"),
    )
    if summary:
        messages.add_summary(session=session, after_message_id=message_id, summary=summary)
    # Unread until a tab shows the conversation (the tab that watched the run clears it).
    answer = messages.get_message(session=session, message_id=message_id)
    sessions.set_unread(session=session, session_id=answer.session_id, unread=True)
    if abandon_questions:
        pauses.abandon_pauses(session=session, run_id=run_id)


def _resolve_model(session: Any, chosen: int | None, session_model: int | None) -> Any:
    """The chosen model, else the session's, else the default; RunRefused if none exists."""
    for model_id in (chosen, session_model):
        if model_id is not None:
            model = model_configs.get_model(session=session, model_id=model_id)
            if model is not None:
                return model
    model = model_configs.get_default_model(session=session)
    if model is None:
        raise RunRefused("No model is configured yet. Add one in Settings → Models.")
    return model


def _own_message(
    session: Any, chat_session_id: int, message_id: int | None, role: MessageRole
) -> ChatMessage:
    message = messages.get_message(session=session, message_id=message_id) if message_id else None
    if message is None or message.session_id != chat_session_id or message.role != role.value:
        raise RunRefused("That message is not part of this conversation any more.")
    return message


def _existing_chat(session: Any, session_uuid: str) -> ChatSession:
    chat = sessions.get_session(session=session, session_uuid=session_uuid)
    if chat is None:
        raise RunRefused("This conversation does not exist (it may have been deleted).")
    return chat


def _mark_reset(*, session: Any, session_uuid: str) -> str:
    """New hermes session id and a RESET marker under the branch's leaf; the old id."""
    chat = _existing_chat(session, session_uuid)
    branch = messages.active_branch(session=session, chat_session_id=chat.id)
    if not branch or branch[-1].status == MessageStatus.RESET.value:
        raise RunRefused("There is nothing to reset yet.")
    old = chat.hermes_session
    sessions.new_hermes_session(session=session, session_id=chat.id)
    messages.append_message(
        session=session,
        chat_session_id=chat.id,
        parent_id=branch[-1].id,
        role=MessageRole.SYSTEM,
        content="Context reset",
        status=MessageStatus.RESET,
    )
    return old


def _session_by_id(*, session: Any, chat_session_id: int) -> ChatSession | None:
    return session.get(ChatSession, chat_session_id)
