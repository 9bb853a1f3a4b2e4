"""The open conversation: its messages (the active branch), versions and the composer's
choices. The live run of the conversation is `LiveState` (state/live.py), below this one."""

from __future__ import annotations

import asyncio
import uuid

import reflex as rx

from agent_chat import routes
from agent_chat.common import tool_profiles
from agent_chat.display.rows import (
    MessageRow,
    ModelRow,
    SkillRow,
    message_row,
    model_row,
    panel_fields,
    skill_row,
)
from agent_chat.display.usage import answer_usage, conversation_meter
from agent_chat.runs.client import BridgeError
from agent_chat.services import conversations, listing, mcp_servers, run_logs, versions
from agent_chat.services import runs as run_cases
from agent_chat.services.conversations import ConversationNotFound, conversation_for
from agent_chat.services.errors import Busy
from agent_chat.services.models import list_models
from agent_chat.services.runs import REFUSALS
from agent_chat.services.workspace_changes import footer_labels
from agent_chat.skills import list_skills
from agent_chat.state.sidebar import SidebarState

COMPOSER_ID = "composer"
DEFAULT_CHOICE = "__default__"  # radix select items cannot have an empty value
NO_SKILL = "__none__"
PAGE_SIZE = 50  # messages shown when a conversation opens; more on request
# What an unfolded thinking panel holds: kept across reloads of the message list.
UNFOLDED_FIELDS = ("expanded", "thinking", "tools", "todos", "answers")


def route_session_id(state: rx.State) -> str:
    """The `[session_id]` of `/chat/[session_id]`, from the URL path."""
    path = str(state.router.url.path or "").rstrip("/")
    return path.rsplit("/", 1)[-1] if path.startswith("/chat/") else ""


class ChatState(SidebarState):
    not_found: bool = False
    messages: list[MessageRow] = []
    answer_changes: dict[str, str] = {}  # answer id -> "3 files changed" (workspace_changes)
    has_earlier: bool = False  # older messages of the branch are not loaded yet
    shown_limit: int = PAGE_SIZE
    composer_error: str = ""
    editing_id: int = 0  # the user message being edited inline
    edit_error: str = ""  # why its edit was refused (the form stays as it was)

    models: list[ModelRow] = []
    selected_model: str = DEFAULT_CHOICE
    skills: list[SkillRow] = []
    selected_skill: str = NO_SKILL
    # (value, label, description) of every profile the operator enabled; the selector
    # shows only when there is a choice.
    queued: list[list[str]] = []  # [id, text] of messages sent when the run ends
    context_meter: str = ""  # the conversation's token use and context fill (usage.py)
    context_percent: int = -1
    tool_profiles: list[list[str]] = []
    selected_profile: str = "chat"
    mcp_names: str = ""  # the MCP servers the selected profile gets: "time, docs"
    max_upload_mb: int = 20  # AGENT_CHAT_MAX_UPLOAD_MB: the composer checks before uploading

    # Finished answers whose text this page already holds from streaming: message id ->
    # stream id. Their rows carry no text, so the answer is not sent a second time.
    _streamed: dict[int, str] = {}
    _page_load: int = 0  # counts page loads: a follower from before one adds nothing to `_streamed`
    # A new conversation (/chat) has no row until its first message; the ids that message
    # will create it with are chosen when the page opens, so its agent can be built meanwhile.
    _draft_uuid: str = ""
    _draft_hermes: str = ""
    # What the person chose in the composer of that new conversation (model, skill, profile):
    # a reload or reconnect re-runs the page's load, which must not undo a choice made
    # while it was on its way.
    _draft_choices: dict[str, str] = {}

    @rx.var
    def no_model(self) -> bool:
        return len(self.models) == 0

    # ---- loading ---------------------------------------------------------------------

    async def _load_common(self) -> None:
        svc = self.svc()
        models = await list_models(svc)
        self.models = [model_row(m) for m in models]
        # Invalid skill folders are listed too (disabled, with the reason), so a broken
        # SKILL.md is visible instead of silently missing.
        self.skills = [skill_row(s) for s in list_skills(svc.settings.skills_dir)]
        self.tool_profiles = [
            [name, tool_profiles.LABELS[name], tool_profiles.DESCRIPTIONS[name]]
            for name in svc.settings.tool_profiles
        ]
        self.max_upload_mb = svc.settings.max_upload_mb
        await self.refresh()
        await svc.bridge_watch.check()
        self.sync_bridge_banner()

    def sync_bridge_banner(self) -> None:
        """Show or clear the "agent service is not reachable" banner as the bridge is."""
        watch = self.svc().bridge_watch
        sentence = watch.banner()
        if sentence:
            self.show_error(sentence)
        elif self.banner.endswith(watch.hint):
            self.banner = ""

    @rx.event
    async def load_index(self):
        """`/` opens the latest conversation, or a new one when there is none."""
        self.current_uuid = ""
        # The most recently used, pinned or filed ones included.
        found = await listing.latest_conversation(self.svc(), user_id=await self.user_id())
        latest = routes.chat_url(found.session_uuid) if found else routes.NEW_CHAT
        return rx.redirect(latest, replace=True)

    @rx.event
    async def load_chat(self) -> None:
        """On page load and on every websocket reconnect (Reflex re-runs on_load)."""
        session_uuid = route_session_id(self)
        self.composer_error = ""
        if session_uuid != self.current_uuid:
            self.shown_limit, self.editing_id = PAGE_SIZE, 0
        self.current_uuid = session_uuid  # first: the sidebar treats it as seen
        self._streamed = {}  # the page may have lost its streams: send texts whole
        self._page_load += 1
        await self._load_common()
        if not session_uuid:
            self._open_draft()
        elif not await self.reload_messages():
            self.forget_conversation()  # not the person's: nothing may act on its uuid
        if not self.not_found:
            await self._show_mcp()
            await self._prepare_agent()

    def forget_conversation(self) -> None:
        """The shown uuid is not the acting person's conversation (another person's, gone,
        or the tab now belongs to someone else): the tab keeps nothing of it, so no later
        event (workspace, memory, share, queue) can act on it; the page says "not found"."""
        self.current_uuid, self.editing_id = "", 0
        self._show_nothing(not_found=True)

    def _show_nothing(self, *, not_found: bool) -> None:
        """No conversation's messages, queue or meter on the page (a new one, or none)."""
        self.not_found, self.title, self.has_earlier = not_found, "", False
        self._set("messages", [])
        self._set("queued", [])
        self._set("context_meter", "")
        self._set("context_percent", -1)
        self._set("mcp_names", "")

    async def owned_uuid(self) -> str:
        """The shown conversation's uuid if it is the acting person's now, else "" (and the
        tab forgets it). Asked per event by every handler that reads the conversation
        without a store function that checks the owner (its workspace files): a tab's state
        outlives a sign-out and may be driven by raw websocket events."""
        if not self.current_uuid:
            return ""
        me = await self.user_id_or_none()
        try:
            if me is None:
                raise ConversationNotFound(self.current_uuid)
            await conversation_for(self.svc(), user_id=me, session_uuid=self.current_uuid)
        except ConversationNotFound:
            self.forget_conversation()
            return ""
        return self.current_uuid

    def _open_draft(self) -> None:
        """A new conversation: empty, nothing stored yet; the default choices, or the ones
        the person made on it before a reload or reconnect."""
        if not self._draft_uuid:  # a reconnect keeps the ids (and the agent built for them)
            self._draft_uuid, self._draft_hermes = str(uuid.uuid4()), str(uuid.uuid4())
            self._draft_choices = {}
        self._show_nothing(not_found=False)
        chosen = self._draft_choices
        model = chosen.get("model", DEFAULT_CHOICE)
        known = any(str(m["id"]) == model for m in self.models)
        self.selected_model = model if known else DEFAULT_CHOICE
        skill = chosen.get("skill", NO_SKILL)
        usable = any(k["folder"] == skill and not k["error"] for k in self.skills)
        self.selected_skill = skill if usable else NO_SKILL
        enabled = self.svc().settings.tool_profiles
        profile = chosen.get("profile", "")
        self.selected_profile = (
            profile if profile in enabled else tool_profiles.default_profile(enabled)
        )

    def _draft_chose(self, name: str, value: str) -> None:
        if not self.current_uuid:  # the new conversation's composer
            self._draft_choices = {**self._draft_choices, name: value}

    def take_draft(self) -> tuple[str, str]:
        """The ids the new conversation's first message creates it with (used once)."""
        ids = (self._draft_uuid or str(uuid.uuid4()), self._draft_hermes or str(uuid.uuid4()))
        self._draft_uuid = self._draft_hermes = ""
        return ids

    def restore_draft(self, session_uuid: str, hermes_session: str) -> None:
        """The first message was refused: the page is a new conversation again."""
        self.current_uuid = ""
        self._draft_uuid, self._draft_hermes = session_uuid, hermes_session

    async def reload_messages(self) -> bool:
        """Load the active branch from the database; False if the session is unknown."""
        svc = self.svc()
        view = await conversations.open_conversation(
            svc,
            user_id=await self.user_id(),
            session_uuid=self.current_uuid,
            limit=self.shown_limit,
            seen=True,  # this tab shows it now
        )
        if view is None:
            self.title, self.messages, self.has_earlier = "", [], False
            return False
        chat = view.chat
        self.title = chat.title
        self._set("has_earlier", view.has_earlier)
        unfolded = {m["id"]: m for m in self.messages if m["expanded"]}
        rows = []
        for m in view.messages:
            used = answer_usage(m, view.models.get(m.model_id or 0))
            row = message_row(
                m, view.stats.get(m.id), view.versions.get(m.id, (1, 1)), used, view.files.get(m.id)
            )
            if m.id in self._streamed:
                row = {**row, "content": "", "stream_id": self._streamed[m.id]}
            if m.id in unfolded:  # keep an unfolded thinking panel open across reloads
                row = {**row, **{k: unfolded[m.id][k] for k in UNFOLDED_FIELDS}}
            rows.append(row)
        self._set("messages", rows)
        labels = await asyncio.to_thread(footer_labels, chat.session_uuid, view.branch)
        self._set("answer_changes", labels)
        self._set("queued", [[str(q.id), q.content] for q in view.queued])
        meter = conversation_meter(view.branch, view.models, view.model)
        self._set("context_meter", meter.text)
        self._set("context_percent", meter.percent)
        if chat.model_id and any(m["id"] == chat.model_id for m in self.models):
            self.selected_model = str(chat.model_id)
        self.selected_skill = chat.skill_folder or NO_SKILL
        enabled = self.svc().settings.tool_profiles
        profile = chat.tool_profile if chat.tool_profile in enabled else None
        self.selected_profile = profile or tool_profiles.default_profile(enabled)
        return True

    def _set(self, name: str, value: object) -> None:
        # Assigning marks a var dirty and resends it whole: only assign what changed.
        if getattr(self, name) != value:
            setattr(self, name, value)

    # ---- composer choices, versions, the thinking panel -----------------------------

    def composer_choices(self) -> dict:
        """The composer's model, skill and tool profile as RunManager takes them."""
        model_id = int(self.selected_model) if self.selected_model.isdigit() else None
        skill = None if self.selected_skill == NO_SKILL else self.selected_skill
        return {"model_id": model_id, "skill_folder": skill, "tool_profile": self.selected_profile}

    async def _prepare_agent(self) -> None:
        # The next message's agent is built while the person types (bridge, background).
        choices = self.composer_choices()
        self.svc().runs.prepare(
            self.current_uuid or self._draft_uuid,
            user_id=await self.user_id(),
            model_id=choices["model_id"],
            tool_profile=choices["tool_profile"],
            draft_hermes_session=None if self.current_uuid else self._draft_hermes,
        )

    async def _show_mcp(self) -> None:
        names = await mcp_servers.profile_servers(self.svc(), profile=self.selected_profile)
        self._set("mcp_names", ", ".join(names))

    @rx.event
    async def set_selected_model(self, value: str) -> None:
        self.selected_model = value
        self._draft_chose("model", value)
        if self.current_uuid or self._draft_uuid:
            await self._prepare_agent()

    @rx.event
    def set_selected_skill(self, value: str) -> None:
        self.selected_skill = value
        self._draft_chose("skill", value)

    @rx.event
    async def set_selected_profile(self, value: str) -> None:
        if value in self.svc().settings.tool_profiles:
            self.selected_profile = value
            self._draft_chose("profile", value)
            await self._show_mcp()
            if self.current_uuid or self._draft_uuid:
                await self._prepare_agent()

    @rx.event
    async def load_earlier(self) -> None:
        self.shown_limit += PAGE_SIZE
        await self.reload_messages()

    async def refuse_while_running(self, action: str) -> bool:
        """Whether a run goes on in the shown conversation (on any worker): then says so."""
        if not self.current_uuid:
            return False
        try:
            await conversations.refuse_while_running(
                self.svc(),
                user_id=await self.user_id(),
                session_uuid=self.current_uuid,
                action=action,
            )
        except Busy as exc:
            self.show_error(str(exc))
            return True
        return False

    @rx.event
    async def switch_version(self, message_id: int, step: int) -> None:
        """Show the previous/next version of a message (and the branch below it; the
        workspace folder follows, or the banner says why not)."""
        try:
            switched = await versions.switch(
                self.svc(), user_id=await self.user_id(), message_id=message_id, step=step
            )
            if switched.files.note:
                self.show_error(switched.files.note)
        except Busy as exc:
            self.show_error(str(exc))
            return
        except REFUSALS as exc:
            self.show_error(f"Could not switch versions: {exc}")
        await self.reload_messages()

    @rx.event
    async def reset_session(self) -> None:
        """Start the agent afresh: later questions do not see the messages above the marker."""
        try:
            await run_cases.reset_conversation(
                self.svc(), user_id=await self.user_id(), session_uuid=self.current_uuid
            )
        except Busy as exc:
            self.show_error(str(exc))
            return
        except (*REFUSALS, BridgeError) as exc:
            self.show_error(f"Could not reset the context: {exc}")
            return
        await self.reload_messages()

    @rx.event
    async def start_edit(self, message_id: int) -> None:
        if not await self.refuse_while_running("Editing"):
            self.editing_id, self.edit_error = message_id, ""

    @rx.event
    def cancel_edit(self) -> None:
        self.editing_id, self.edit_error = 0, ""

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
            me = await self.user_id()
            view = await run_logs.answer_view(self.svc(), user_id=me, message_id=message_id)
            row.update(panel_fields(view), expanded=True)
        self.messages = [*self.messages[:index], row, *self.messages[index + 1 :]]
