"""The open conversation's live run, and the two per-tab loops.

`follow` mirrors one run into this tab while it lasts (a `LiveFeed` over
`RunManager.subscribe`): small vars through the state, new text as scripts, at most one
update per 50 ms. `watch` lives as long as the tab: it keeps the sidebar's badges current
from `RunManager.session_changes(user_id=)` (its person's only) and starts `follow` when a run of the shown
conversation begins elsewhere (another tab, the API). Each loop has a cancel flag: a
newer loop (page load, reconnect) makes the older one stop at its next step.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import reflex as rx

from agent_chat import routes
from agent_chat.display.feed import LiveFeed, paced_patches
from agent_chat.display.notices import notices
from agent_chat.display.rows import TodoRow, ToolRow
from agent_chat.display.subagent_rows import SubagentRow, SubLine, SubTodoRow, SubTools
from agent_chat.runs.client import BridgeError
from agent_chat.runs.manager import StartedRun, UnknownRun
from agent_chat.services import runs as use
from agent_chat.services import versions
from agent_chat.services.conversations import ConversationNotFound, conversation_state
from agent_chat.services.runs import REFUSALS, RunConflict
from agent_chat.state.chat import COMPOSER_ID, ChatState
from agent_chat.state.page_scripts import (
    BAD_ATTACHMENTS,
    attached_ids,
    clear_composer,
    notify_script,
)

NO_CONVERSATION = "This conversation does not exist (it may have been deleted)."
COALESCE_S = 0.05  # at most one live update per 50 ms per tab
LONG_ANSWER = 16_000  # characters; beyond, one update per 100 ms (benchmarks/RESULTS.md #3)
TAB_CHECK_S = 30.0  # how often an idle watcher checks that its tab is still there


class LiveState(ChatState):
    # Set from `LiveFeed.values()` while a run of this conversation is followed.
    run_id: str = ""
    message_id: int = 0
    answer_stream: str = ""
    thinking_stream: str = ""
    status: str = ""
    waiting: bool = False
    reconnecting: bool = False
    tool: ToolRow | None = None  # the tool running now
    tools: list[ToolRow] = []
    # The running delegate_task call's child agents, in parts (display/subagent_rows.py).
    subagents: list[SubagentRow] = []
    subagent_lines: list[SubLine] = []
    subagent_tools: list[SubTools] = []
    subagent_todos: list[list[SubTodoRow]] = []
    todos: list[TodoRow] = []
    clarify_id: str = ""
    question: str = ""
    choices: list[str] = []
    steers: list[list[str]] = []  # [text, "sent" | "delivered" | "not delivered"]
    pause_kind: str = ""  # "clarify" (a question) or "approval" (a command to allow)
    danger: str = ""  # an approval: hermes' words for why the command is dangerous
    asker: str = ""  # an approval for a child agent: its goal (display/feed.py)
    answer_sending: bool = False  # an answer is on its way to the agent
    answer_error: str = ""

    _follower: str = ""  # the follow loop that may write (cancel flag for older ones)
    _watcher: str = ""

    @rx.var
    def running(self) -> bool:
        return self.run_id != ""

    def _clear_live(self) -> None:
        follower, watcher = self._follower, self._watcher
        self.reset()  # this state's own vars only: the conversation above is kept
        self._follower, self._watcher = follower, watcher

    # ---- page load ---------------------------------------------------------------------

    @rx.event
    def watch_here(self):
        """Pages without a conversation (settings, schedules): none is shown (nor followed,
        nor highlighted), and the sidebar's badges and the notifications stay live."""
        self.current_uuid = ""
        self._clear_live()
        self._watcher = uuid.uuid4().hex
        return LiveState.watch(self._watcher)

    @rx.event
    async def start(self):
        """After load_index/load_chat: the tab's watcher, and the follower if a run goes
        (consumed by any worker)."""
        self._watcher = uuid.uuid4().hex
        events = [LiveState.watch(self._watcher)]
        shown = self.current_uuid and not self.not_found  # only the person's own (load_chat)
        me = await self.user_id_or_none() if shown else None
        if me is not None and await self._runs_here(me):
            events.append(self._follow())
        elif self.run_id:
            self._clear_live()
        return events

    def _follow(self):
        self._follower = uuid.uuid4().hex
        return LiveState.follow(self._follower)

    async def _runs_here(self, me: int) -> bool:
        """Whether a run of the shown conversation goes on (consumed by any worker)."""
        try:
            state = await conversation_state(self.svc(), user_id=me, session_uuid=self.current_uuid)
        except ConversationNotFound:  # deleted meanwhile: the next load says so
            return False
        return bool(state)

    # ---- commands ------------------------------------------------------------------------

    @rx.event
    async def send(self, form: dict):
        """Enter: a run answers the message, or it is queued while one goes on."""
        text = str(form.get("message") or "")
        self.composer_error = ""
        if self.not_found:
            self.composer_error = NO_CONVERSATION
            return None
        files = attached_ids(form)
        if files is None:
            self.composer_error = BAD_ATTACHMENTS
            return None
        if not self.current_uuid:  # the conversation starts with its first message
            return await self._start_conversation(text, files)
        try:
            started = await use.send_message(
                self.svc(),
                user_id=await self.user_id(),
                session_uuid=self.current_uuid,
                text=text,
                attachment_ids=files,
                **self.composer_choices(),
            )
        except ConversationNotFound:
            self.composer_error = NO_CONVERSATION
            return None
        except REFUSALS as exc:
            self.composer_error = str(exc)  # the text stays in the box: nothing is lost
            return None
        return await self._sent(started, text, files)

    async def _start_conversation(self, text: str, files: list[int]):
        draft_uuid, draft_hermes = self.take_draft()
        try:
            started = await use.start_conversation(
                self.svc(),
                user_id=await self.user_id(),
                session_uuid=draft_uuid,
                hermes_session=draft_hermes,
                text=text,
                attachment_ids=files,
                **self.composer_choices(),
            )
        except REFUSALS as exc:
            self.composer_error = str(exc)
            self.restore_draft(draft_uuid, draft_hermes)  # the page stays a new one
            return None
        self.current_uuid = draft_uuid
        await self._after_new_run(started)
        # The new conversation's own URL: the same page (no remount, the composer keeps what
        # was typed since), whose load starts the follower.
        return [
            clear_composer(text, files),
            rx.redirect(routes.chat_url(self.current_uuid), replace=True),
        ]

    async def _sent(self, started: StartedRun | None, text: str, files: list[int]):
        """Show the message sent (its run followed) or queued (in the queue's list)."""
        if started is None:
            await self.reload_messages()
            return [clear_composer(text, files)]
        return [clear_composer(text, files), await self._after_new_run(started)]

    # ---- queue and steer while a run works ----------------------------------------------

    @rx.event
    async def steer(self, text: str):
        """The Steer button: guidance the working agent reads with its next tool result."""
        self.composer_error = ""
        if not self.run_id:
            self.composer_error = "Nothing is running: send it as a message instead."
            return None
        text = str(text or "")
        try:
            await use.steer(self.svc(), user_id=await self.user_id(), run_id=self.run_id, text=text)
        except REFUSALS as exc:
            self.composer_error = str(exc)
            return None
        except BridgeError as exc:
            self.composer_error = f"The guidance was not delivered: {exc.message}"
            return None
        return clear_composer(text)

    @rx.event
    async def cancel_queued(self, queued_id: str) -> None:
        with contextlib.suppress(*REFUSALS):  # sent or removed meanwhile: the list shows it
            await use.take_queued(self.svc(), user_id=await self.user_id(), queued_id=queued_id)
        await self.reload_messages()

    @rx.event
    async def edit_queued(self, queued_id: str):
        """Take a queued message back into the composer to change it."""
        try:
            text = await use.take_queued(
                self.svc(), user_id=await self.user_id(), queued_id=queued_id
            )
        except REFUSALS:
            text = None  # sent or removed meanwhile
        await self.reload_messages()
        return rx.set_value(COMPOSER_ID, text) if text is not None else None

    async def _after_new_run(self, started: StartedRun):
        """Show the run just started here; the event that follows it live."""
        self.run_id, self.message_id = started.run_id, started.assistant_message_id
        await self.reload_messages()
        await self.refresh()
        return self._follow()

    @rx.event
    async def regenerate(self, message_id: int):
        """Answer the same question again as a new version of this answer."""
        try:
            started = await versions.regenerate(
                self.svc(), user_id=await self.user_id(), message_id=message_id
            )
        except REFUSALS as exc:
            self.show_error(str(exc))
            return None
        return await self._after_new_run(started)

    @rx.event
    async def stop(self):
        if not self.run_id:
            return
        try:
            await use.stop(self.svc(), user_id=await self.user_id(), run_id=self.run_id)
        except RunConflict:
            pass  # it ended meanwhile: the follower shows how
        except BridgeError as exc:
            self.show_error(f"Could not stop the run: {exc.message}")
        except REFUSALS as exc:
            self.show_error(f"Could not stop the run: {exc}")

    @rx.event
    async def answer_question(self, answer: str):
        """Send the person's answer to the agent's pending question (or approval)."""
        if not self.clarify_id or self.answer_sending:
            self.answer_error = "This question was already answered."
            return
        self.answer_sending, self.answer_error = True, ""
        yield
        try:
            await use.answer(
                self.svc(),
                user_id=await self.user_id(),
                run_id=self.run_id,
                clarify_id=self.clarify_id,
                answer=str(answer or ""),
            )
        except (RunConflict, UnknownRun):
            self.answer_sending = False
            self.answer_error = "This question was already answered or is no longer open."
        except REFUSALS as exc:
            self.answer_sending = False
            self.answer_error = str(exc)
        except BridgeError as exc:
            self.answer_sending = False
            self.answer_error = f"The answer could not be delivered: {exc.message}"

    @rx.event
    async def answer_custom(self, form: dict):
        return LiveState.answer_question(str(form.get("answer") or ""))

    # ---- the loops -----------------------------------------------------------------------

    @rx.event(background=True)
    async def follow(self, follower: str):
        """Mirror the shown conversation's run (consumed by any worker) into this tab until
        it ends, or until the tab's socket is no longer on this worker (it reconnected to
        another, whose page load starts a follower there)."""
        svc = self.svc()
        runs = svc.runs
        async with self:
            if self._follower != follower:
                return
            if (me := await self.user_id_or_none()) is None:
                return
            token, page_load = self.router.session.client_token, self._page_load
            live = await runs.running_in(self.current_uuid, user_id=me)
            if live is None:  # it ended before it could be followed: show what is stored
                self._clear_live()
                await self.reload_messages()
                return
            session_uuid = self.current_uuid
        feed = LiveFeed(live.run_id, live.message_id)
        try:
            events = await runs.subscribe(live.run_id, user_id=me)  # only the person's runs
        except UnknownRun:
            return
        try:
            async for patch in paced_patches(feed, events, COALESCE_S, LONG_ANSWER):
                if not svc.tab_connected(token):
                    return  # gone, or on another worker now (it follows there)
                async with self:
                    if self._follower != follower or self.current_uuid != session_uuid:
                        return  # superseded, or the tab shows another conversation now
                    if not feed.finished:  # else cleared just below: the stored answer shows
                        self._apply(patch.values)
                if patch.chunks:
                    yield rx.call_script(patch.script)
            feed.add(events.take_ready())
            patch = feed.patch()
            if patch.chunks:  # the text that came with the last events
                yield rx.call_script(patch.script)
            async with self:
                if self._follower != follower or self.current_uuid != session_uuid:
                    return
                # A page load since this follower began (the old one ends before `start`
                # replaces it) may have lost the streamed text: the answer is sent whole.
                if page_load == self._page_load and feed.page_has_answer(feed.view.answer):
                    self._streamed = {**self._streamed, feed.message_id: feed.answer_stream}
                self._clear_live()
                await self.reload_messages()
                await self.refresh()
        finally:
            events.close()

    def _apply(self, values: dict) -> None:
        old_clarify = self.clarify_id
        for name, value in values.items():
            setattr(self, name, value)
        if self.clarify_id != old_clarify:  # a new question: a fresh answer form
            self.answer_sending, self.answer_error = False, ""

    @rx.event(background=True)
    async def watch(self, watcher: str):
        """Keep the badges current while this tab is open; follow runs started elsewhere."""
        svc = self.svc()
        async with self:
            token = self.router.session.client_token
            if (me := await self.user_id_or_none()) is None:
                return
        # Only this person's conversations: a tab signed in as someone else (same tab, new
        # sign-in) reloads its page, which starts a new watcher for them.
        changes = svc.runs.session_changes(user_id=me)
        try:
            # Subscribed first, then one catch-up: a change between the page load's own
            # refresh and this subscription is not lost.
            shown: set[str] | None = None  # None: every conversation may have changed
            seen: dict[str, str] | None = None  # conversation states at the last look
            told = -1  # the count the tab title shows
            while True:
                async with self:
                    if self._watcher != watcher:
                        return  # a newer watcher (page load, reconnect) took over
                    if await self.user_id_or_none() != me:
                        return  # signed out, or in as someone else: their page starts its own
                    await self.refresh()
                    self.sync_bridge_banner()  # the bridge went away or came back
                    found, count, seen = notices(seen, self.sessions, self.current_uuid)
                    tell = notify_script(found, count) if found or count != told else None
                    told = count
                    follow = None
                    current = self.current_uuid
                    if current and (shown is None or current in shown) and not self.run_id:
                        # A run of this conversation came or went elsewhere: show it.
                        await self.reload_messages()
                        if await self._runs_here(me):
                            follow = self._follow()
                if tell is not None:
                    yield tell
                if follow is not None:
                    yield follow
                change = None
                while change is None:
                    change = await changes.next(timeout=TAB_CHECK_S)
                    if change is None and not svc.tab_connected(token):
                        return  # the tab is gone; its next load starts a new watcher
                await asyncio.sleep(COALESCE_S)  # one refresh for a burst of changes
                shown = {change.session_uuid, *(c.session_uuid for c in changes.take_ready())}
        finally:
            changes.close()
