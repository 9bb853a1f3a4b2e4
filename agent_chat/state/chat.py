"""The open conversation: its messages, the live run, the composer."""

from __future__ import annotations

import asyncio
import logging
import time

import reflex as rx

from agent_chat import routes
from agent_chat.components.stream_text import append_script
from agent_chat.db import logs, messages, model_configs, sessions
from agent_chat.db.conversation import load_conversation
from agent_chat.db.errors import StoreError
from agent_chat.db.messages import switch_version
from agent_chat.protocol.log_codec import row_to_event
from agent_chat.protocol.reducer import RunView, replay
from agent_chat.runs.client import BridgeError
from agent_chat.runs.live_text import LiveText
from agent_chat.runs.manager import LiveRun, RunRefused
from agent_chat.skills import list_skills
from agent_chat.state.base import AppState, client_sid
from agent_chat.state.rows import (
    MessageRow,
    ModelRow,
    SkillRow,
    TodoRow,
    ToolRow,
    message_row,
    model_row,
    panel_fields,
    skill_row,
    todo_rows,
    tool_row,
)
from agent_chat.state.sidebar import SidebarState

log = logging.getLogger(__name__)

COMPOSER_ID = "composer"
DEFAULT_CHOICE = "__default__"  # radix select items cannot have an empty value
NO_SKILL = "__none__"
COALESCE_S = 0.05
LONG_ANSWER = 16_000  # characters; beyond, one live update per 100 ms
PAGE_SIZE = 50
UNFOLDED_FIELDS = (
    "expanded",
    "thinking",
    "tools",
    "todos",
    "answers",
)  # messages shown when a conversation opens; more on request  # at most one live update per 50 ms per tab


def _route_session_id(state: rx.State) -> str:
    """The `[session_id]` of `/chat/[session_id]`, from the URL path."""
    path = str(state.router.url.path or "").rstrip("/")
    return path.rsplit("/", 1)[-1] if path.startswith("/chat/") else ""


class ChatState(AppState):
    current_uuid: str = ""
    title: str = ""
    not_found: bool = False
    messages: list[MessageRow] = []
    has_earlier: bool = False  # older messages of the branch are not loaded yet
    shown_limit: int = PAGE_SIZE
    composer_error: str = ""
    editing_id: int = 0  # the user message being edited inline

    # The run of this conversation that is going now (if any).
    live_run_id: str = ""
    live_message_id: int = 0
    # The growing texts are not state vars (resending them per update costs the square of
    # the answer): the page gets a seed here when it attaches, then only new text.
    live_answer_id: str = ""
    live_answer_seed: str = ""
    live_thinking_id: str = ""
    live_thinking_seed: str = ""
    live_status: str = ""
    live_waiting: bool = False
    live_reconnecting: bool = False
    live_tool: ToolRow | None = None  # the tool running now
    live_tools: list[ToolRow] = []
    live_todos: list[TodoRow] = []
    live_clarify_id: str = ""
    live_question: str = ""
    live_choices: list[str] = []
    answer_sending: bool = False  # an answer is on its way to the agent
    answer_error: str = ""

    models: list[ModelRow] = []
    selected_model: str = DEFAULT_CHOICE
    skills: list[SkillRow] = []
    selected_skill: str = NO_SKILL

    _follow_gen: int = 0
    # Finished answers whose text this page already has from streaming: message id -> stream
    # id. Their rows carry no text, so the answer is not sent a second time.
    _streamed: dict[int, str] = {}
    _seen_version: int = 0  # RunManager.session_version when this tab last synced
    _follow_beat: float = 0.0  # when this tab's follower last ran (time.time())

    @rx.var
    def running(self) -> bool:
        return self.live_run_id != ""

    @rx.var
    def no_model(self) -> bool:
        return len(self.models) == 0

    # ---- loading ---------------------------------------------------------------------

    async def _load_common(self) -> None:
        svc = self.svc()
        models = await svc.storage.call(model_configs.list_models)
        self.models = [model_row(m) for m in models]
        # Invalid skill folders are listed too (disabled, with the reason), so a broken
        # SKILL.md is visible instead of silently missing.
        self.skills = [skill_row(s) for s in list_skills(svc.settings.skills_dir)]
        sidebar = await self.get_state(SidebarState)
        await sidebar.refresh()
        try:
            await svc.bridge.health()
        except BridgeError as exc:
            self.show_error(
                f"{exc.message} Answers cannot be generated until it is running "
                "(start the app with ./run.sh, which starts it too)."
            )
        else:
            if self.banner.startswith("The agent service"):
                self.banner = ""

    def _clear_live(self) -> None:
        self.live_run_id = ""
        self.live_message_id = 0
        self.live_answer_id = ""
        self.live_answer_seed = ""
        self.live_thinking_id = ""
        self.live_thinking_seed = ""
        self.live_status = ""
        self.live_waiting = False
        self.live_reconnecting = False
        self.live_tool = None
        self.live_tools = []
        self.live_todos = []
        self.live_clarify_id = ""
        self.live_question = ""
        self.live_choices = []
        self.answer_sending = False
        self.answer_error = ""

    @rx.event
    async def load_index(self):
        await self._load_common()
        sidebar = await self.get_state(SidebarState)
        if sidebar.sessions:
            return rx.redirect(routes.chat_url(sidebar.sessions[0]["uuid"]))
        self.current_uuid, self.title, self.messages, self.not_found = "", "", [], False
        self._clear_live()
        return SidebarState.watch

    @rx.event
    async def load_chat(self):
        session_uuid = _route_session_id(self)
        self.composer_error = ""
        if session_uuid != self.current_uuid:
            self.shown_limit, self.editing_id = PAGE_SIZE, 0
        self.current_uuid = session_uuid  # first: the sidebar treats it as seen
        self._streamed = {}  # a page load starts with empty streams
        await self._load_common()
        self._seen_version = self.svc().runs.session_version(session_uuid)
        found = await self._reload_messages()
        self.not_found = not found
        events = [SidebarState.watch]
        if found and self._attach_live():
            events.append(ChatState.follow_run)
        return events

    async def reload_header(self) -> None:
        chat = await self.svc().storage.call(sessions.get_session, session_uuid=self.current_uuid)
        self.title = chat.title if chat else ""

    async def _reload_messages(self) -> bool:
        """Load the active branch from the database; False if the session is unknown."""
        svc = self.svc()
        view = await svc.storage.call(
            load_conversation, session_uuid=self.current_uuid, limit=self.shown_limit
        )
        if view is None:
            self.title, self.messages, self.has_earlier = "", [], False
            self._clear_live()
            return False
        chat = view.chat
        if chat.unread:  # this tab shows it now: it has been seen
            await svc.storage.call(sessions.set_unread, session_id=chat.id, unread=False)
        self.title = chat.title
        self._set("has_earlier", view.has_earlier)
        unfolded = {m["id"]: m for m in self.messages if m["expanded"]}
        rows = []
        for m in view.messages:
            row = message_row(m, view.stats.get(m.id), view.versions.get(m.id, (1, 1)))
            if m.id in self._streamed:
                row = {**row, "content": "", "stream_id": self._streamed[m.id]}
            if m.id in unfolded:  # keep an unfolded thinking panel open across reloads
                row = {**row, **{k: unfolded[m.id][k] for k in UNFOLDED_FIELDS}}
            rows.append(row)
        # The list is resent whole when assigned: only when something changed.
        self._set("messages", rows)
        if chat.model_id and any(m["id"] == chat.model_id for m in self.models):
            self.selected_model = str(chat.model_id)
        self.selected_skill = chat.skill_folder or NO_SKILL
        return True

    def _attach_live(self) -> bool:
        """Point the live vars at this session's run, if one is going."""
        live = self.svc().runs.live_for_session(self.current_uuid)
        if live is None:
            self._clear_live()
            return False
        self.live_run_id = live.run_id
        self.live_message_id = live.message_id
        self._show_live(live)
        return True

    def _seed(self, text: LiveText, view: RunView, *, answer_only: bool = False) -> None:
        """Hand the page the texts so far (whole); later updates carry only new text."""
        if answer_only:
            self.live_answer_seed = text.seed_answer(view)
        else:
            self.live_answer_seed, self.live_thinking_seed = text.seed(view)
        self.live_answer_id, self.live_thinking_id = text.answer_id, text.thinking_id

    def _set(self, name: str, value: object) -> None:
        # Assigning marks a var dirty and resends it whole: only assign what changed.
        if getattr(self, name) != value:
            setattr(self, name, value)

    def _show_live(self, live: LiveRun) -> None:
        view = live.view
        self._set("live_status", view.status)
        self._set("live_waiting", view.state == "waiting_input")
        self._set("live_reconnecting", live.reconnecting)
        current = view.current_tool
        self._set("live_tool", tool_row(current) if current and not current.done else None)
        self._set("live_tools", [tool_row(t) for t in view.tools])
        self._set("live_todos", todo_rows(view))
        clarify = view.clarify
        clarify_id = clarify.clarify_id if clarify else ""
        if clarify_id != self.live_clarify_id:
            self.live_clarify_id = clarify_id
            self.live_question = clarify.question if clarify else ""
            self.live_choices = list(clarify.choices) if clarify else []
            self.answer_sending = False
            self.answer_error = ""

    async def sync_with_runs(self) -> bool:
        """Catch up with runs started or ended elsewhere (another tab, an edit in another
        window); True if this tab should start following a run."""
        runs = self.svc().runs
        version = runs.session_version(self.current_uuid) if self.current_uuid else 0
        if version == self._seen_version:
            return False
        if self.live_run_id and (
            runs.live(self.live_run_id) is not None or time.time() - self._follow_beat < 2
        ):
            return False  # this tab's follower tracks the run and will catch its end
        # Either a run came or went elsewhere, or this tab shows a run that has ended
        # without its follower noticing: show the stored state.
        self._seen_version = version
        self._clear_live()
        await self._reload_messages()
        return self._attach_live()

    # ---- composer --------------------------------------------------------------------

    @rx.event
    def set_selected_model(self, value: str) -> None:
        self.selected_model = value

    @rx.event
    def set_selected_skill(self, value: str) -> None:
        self.selected_skill = value

    @rx.event
    async def send(self, form: dict):
        text = str(form.get("message") or "")
        svc = self.svc()
        self.composer_error = ""
        try:
            svc.runs.validate_message(text)
        except RunRefused as exc:
            self.composer_error = str(exc)
            return None
        new_session = not self.current_uuid
        if new_session:
            chat = await svc.storage.call(sessions.create_session)
            self.current_uuid = chat.session_uuid
        model_id = int(self.selected_model) if self.selected_model.isdigit() else None
        skill = None if self.selected_skill == NO_SKILL else self.selected_skill
        try:
            await svc.runs.send(
                session_uuid=self.current_uuid, text=text, model_id=model_id, skill_folder=skill
            )
        except RunRefused as exc:
            self.composer_error = str(exc)  # the text stays in the box: nothing is lost
            return None
        follow = await self._after_new_run()
        # A new conversation gets its own URL; its page load starts the follower.
        then = rx.redirect(routes.chat_url(self.current_uuid)) if new_session else follow
        return [rx.set_value(COMPOSER_ID, ""), then]

    @rx.event
    async def stop(self):
        if not self.live_run_id:
            return
        try:
            await self.svc().runs.stop(self.live_run_id)
        except BridgeError as exc:
            self.show_error(f"Could not stop the run: {exc.message}")

    # ---- branches: versions, edit, regenerate, reset ----------------------------------

    @rx.event
    async def load_earlier(self) -> None:
        self.shown_limit += PAGE_SIZE
        await self._reload_messages()

    def _refuse_while_running(self, action: str) -> bool:
        if self.live_run_id:
            self.show_error(
                f"{action} is not possible while the agent is answering: stop it or wait."
            )
            return True
        return False

    @rx.event
    async def switch_version(self, message_id: int, step: int) -> None:
        """Show the previous/next version of a message (and the branch below it)."""
        if self._refuse_while_running("Switching versions"):
            return
        try:
            await self.svc().storage.call(switch_version, message_id=message_id, step=step)
        except StoreError as exc:
            self.show_error(f"Could not switch versions: {exc}")
        await self._reload_messages()

    @rx.event
    def start_edit(self, message_id: int) -> None:
        if not self._refuse_while_running("Editing"):
            self.editing_id = message_id

    @rx.event
    def cancel_edit(self) -> None:
        self.editing_id = 0

    async def _after_new_run(self):
        """Show the run just started here; the event that follows it live."""
        await self._reload_messages()
        self._attach_live()
        sidebar = await self.get_state(SidebarState)
        await sidebar.refresh()
        return ChatState.follow_run

    @rx.event
    async def submit_edit(self, form: dict):
        """Send the edited text as a new version of the user message, answered afresh."""
        message_id, text = self.editing_id, str(form.get("text") or "")
        if self._refuse_while_running("Editing"):
            return None
        try:
            await self.svc().runs.edit(
                session_uuid=self.current_uuid, message_id=message_id, text=text
            )
        except RunRefused as exc:
            self.show_error(str(exc))
            return None
        self.editing_id = 0
        return await self._after_new_run()

    @rx.event
    async def regenerate(self, message_id: int):
        """Answer the same question again as a new version of this answer."""
        if self._refuse_while_running("Regenerating"):
            return None
        try:
            await self.svc().runs.regenerate(session_uuid=self.current_uuid, message_id=message_id)
        except RunRefused as exc:
            self.show_error(str(exc))
            return None
        return await self._after_new_run()

    @rx.event
    async def reset_session(self) -> None:
        """Start the agent afresh: later questions do not see the messages above the marker."""
        if self._refuse_while_running("Resetting the context"):
            return
        try:
            await self.svc().runs.reset(session_uuid=self.current_uuid)
        except (RunRefused, BridgeError) as exc:
            self.show_error(f"Could not reset the context: {exc}")
            return
        await self._reload_messages()

    # ---- the thinking panel and AskFor ---------------------------------------------

    @rx.event
    async def toggle_panel(self, message_id: int) -> None:
        """Unfold a finished message's thinking panel (rebuilt from its log) or fold it."""
        index = next((i for i, m in enumerate(self.messages) if m["id"] == message_id), None)
        if index is None:
            return
        row = dict(self.messages[index])
        if row["expanded"]:
            row["expanded"] = False
        else:
            rows = await self.svc().storage.call(logs.list_logs, message_id=message_id)
            view = replay([row_to_event(r.seq, r.kind, r.content, r.meta_json) for r in rows])
            row.update(panel_fields(view), expanded=True)
        self.messages = [*self.messages[:index], row, *self.messages[index + 1 :]]

    @rx.event
    async def copy_message(self, message_id: int):
        """Copy a message whose text the page holds only in its stream."""
        message = await self.svc().storage.call(messages.get_message, message_id=message_id)
        if message is not None:
            return [rx.set_clipboard(message.content), rx.toast("Copied", duration=1500)]
        return None

    @rx.event
    async def answer_question(self, answer: str):
        """Send the person's answer to the agent's pending question."""
        answer = (answer or "").strip()
        if not answer:
            self.answer_error = "Choose an option or type an answer."
            return
        if not self.live_clarify_id or self.answer_sending:
            self.answer_error = "This question was already answered."
            return
        self.answer_sending, self.answer_error = True, ""
        yield
        try:
            await self.svc().runs.answer(self.live_run_id, self.live_clarify_id, answer)
        except BridgeError as exc:
            self.answer_sending = False
            if exc.status_code == 404:
                self.answer_error = "This question was already answered or is no longer open."
            else:
                self.answer_error = f"The answer could not be delivered: {exc.message}"

    @rx.event
    async def answer_custom(self, form: dict):
        return ChatState.answer_question(str(form.get("answer") or ""))

    # ---- following the live run ------------------------------------------------------

    @rx.event(background=True)
    async def follow_run(self):
        """Mirror the run into this tab until it ends: small vars through the state, the
        growing texts as deltas (`rx.call_script`), at most one update per 50 ms."""
        runs = self.svc().runs
        async with self:
            run_id = self.live_run_id
            live = runs.live(run_id) if run_id else None
            if live is None:
                return  # nothing to follow (queued behind a switch): leave any follower be
            self._follow_gen += 1
            gen = self._follow_gen
            self._follow_beat = time.time()
            token = self.router.session.client_token
            text = LiveText(live.message_id)
            self._seed(text, live.view)
        sid = client_sid(token)
        while runs.live(run_id) is live:
            changed = await live.wait_changed(timeout=15)
            now_sid = client_sid(token)
            if not changed and now_sid is None:
                return  # the tab is gone; a reload re-attaches through load_chat
            # A long answer updates less often: each update makes the browser lay out the
            # growing text again (benchmarks/RESULTS.md #3).
            await asyncio.sleep(
                COALESCE_S if len(live.view.answer) < LONG_ANSWER else 2 * COALESCE_S
            )
            view = live.view
            async with self:
                if self._follow_gen != gen or self.live_run_id != run_id:
                    return  # switched session, or a newer follower took over
                self._follow_beat = time.time()
                self._show_live(live)
                if now_sid is not None and now_sid != sid:
                    # Reconnected: chunks sent meanwhile were dropped, so start over whole.
                    sid = now_sid
                    self._seed(text, view)
                elif text.needs_answer_seed(view):
                    self._seed(text, view, answer_only=True)
            chunks = text.chunks(view)
            if chunks:
                yield rx.call_script(";".join(append_script(c) for c in chunks))
        final = live.view
        chunks = text.chunks(final)  # the text that came with the last events
        if chunks:
            yield rx.call_script(";".join(append_script(c) for c in chunks))
        async with self:
            if self._follow_gen != gen or self.live_run_id != run_id:
                return
            if text.page_has_answer(final.answer):
                self._streamed = {**self._streamed, live.message_id: text.answer_id}
            await self._reload_messages()
            self._clear_live()
            sidebar = await self.get_state(SidebarState)
            await sidebar.refresh()
