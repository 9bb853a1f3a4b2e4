"""The session list (pins, folders, new, switch, rename, archive, delete, badges) and which
conversation the tab shows: the conversation states derive from this one. Folder and pin
commands: state/folders.py; search: state/search.py. What changes a conversation is a use
case of services/conversations.py (the API does the same)."""

from __future__ import annotations

import reflex as rx

from agent_chat import routes
from agent_chat.db.errors import NotFound, StoreError
from agent_chat.db.models import ChatSession
from agent_chat.display.rows import FolderRow, SessionRow, session_row
from agent_chat.services import conversations, listing
from agent_chat.services.errors import Busy
from agent_chat.state.base import AppState

PAGE_SIZE = 50


class SidebarState(AppState):
    # The sidebar's three parts: pinned, folders (each with its conversations), the rest (paged).
    pinned: list[SessionRow] = []
    folders: list[FolderRow] = []
    sessions: list[SessionRow] = []
    has_more: bool = False
    renaming_uuid: str = ""
    show_archived: bool = False
    _folder_limits: dict[int, int] = {}  # folder id → conversations shown ("Show more")
    # The conversation this tab shows ("" on the start page) and its title.
    current_uuid: str = ""
    title: str = ""

    async def refresh(self) -> None:
        """Reload pins, folders and the first pages of the list (as many rows as shown now)."""
        svc = self.svc()
        me = await self.user_id()
        limit = max(PAGE_SIZE, len(self.sessions))
        listed = await listing.sidebar(
            svc,
            user_id=me,
            limit=limit,
            include_archived=self.show_archived,
            folder_limits=self._folder_limits,
        )
        states = await listing.conversation_states(svc, user_id=me)

        def row(chat: ChatSession) -> SessionRow:
            state = states.of(chat)
            if not state and chat.unread and chat.session_uuid != self.current_uuid:
                state = "unread"
            return session_row(chat, state)

        pinned = [row(c) for c in listed.pinned]
        folders = [
            FolderRow(
                id=f.folder.id,
                name=f.folder.name,
                collapsed=f.folder.collapsed,
                count=f.count,
                sessions=[row(c) for c in f.sessions],
            )
            for f in listed.folders
        ]
        shown = [row(c) for c in listed.unfiled[:limit]]
        # Assigning resends the whole list: only what changed.
        for name, value in (("pinned", pinned), ("folders", folders), ("sessions", shown)):
            if getattr(self, name) != value:
                setattr(self, name, value)
        self.has_more = len(listed.unfiled) > limit

    @rx.event
    async def load_list(self) -> None:
        """A settings page's load: its sidebar lists the conversations as they are now (the
        live feed that keeps it current runs on the chat pages)."""
        await self.refresh()

    @rx.event
    async def load_more(self) -> None:
        svc = self.svc()
        me = await self.user_id()
        rows = await listing.list_conversations(
            svc,
            user_id=me,
            limit=PAGE_SIZE + 1,
            offset=len(self.sessions),
            include_archived=self.show_archived,
            section="unfiled",
        )
        states = await svc.runs.session_states(user_id=me)
        self.sessions = self.sessions + [
            session_row(c, states.get(c.session_uuid, "")) for c in rows[:PAGE_SIZE]
        ]
        self.has_more = len(rows) > PAGE_SIZE

    @rx.event
    async def toggle_archived(self) -> None:
        self.show_archived = not self.show_archived
        self.sessions = []
        await self.refresh()

    @rx.event
    async def set_archived(self, session_uuid: str, archived: bool) -> None:
        try:
            await conversations.set_archived(
                self.svc(),
                user_id=await self.user_id(),
                session_uuid=session_uuid,
                archived=archived,
            )
        except NotFound:
            self.show_error("This conversation no longer exists.")
        await self.refresh()

    @rx.event
    def new_session(self):
        # No row yet: the conversation is created by its first message (state/live.py).
        return rx.redirect(routes.NEW_CHAT)

    @rx.event
    def start_rename(self, session_uuid: str) -> None:
        self.renaming_uuid = session_uuid

    @rx.event
    def cancel_rename(self) -> None:
        self.renaming_uuid = ""

    @rx.event
    async def rename(self, form: dict) -> None:
        session_uuid = self.renaming_uuid
        self.renaming_uuid = ""
        try:
            chat = await conversations.rename_conversation(
                self.svc(),
                user_id=await self.user_id(),
                session_uuid=session_uuid,
                title=str(form.get("title", "")),
            )
        except (StoreError, ValueError) as exc:
            self.show_error(f"Could not rename: {exc}")
        else:
            if self.current_uuid == session_uuid:
                self.title = chat.title
        await self.refresh()

    @rx.event
    async def delete(self, session_uuid: str):
        try:
            await conversations.delete_conversation(
                self.svc(), user_id=await self.user_id(), session_uuid=session_uuid
            )
        except Busy as exc:
            self.show_error(str(exc))
            return None
        except StoreError as exc:
            self.show_error(f"Could not delete: {exc}")
        await self.refresh()
        if self.current_uuid == session_uuid:
            return rx.redirect(routes.INDEX)
        return None
