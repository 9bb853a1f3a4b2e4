"""The session list: new, switch, rename, delete, and the running/waiting badges."""

from __future__ import annotations

import asyncio

import reflex as rx

from agent_chat import routes
from agent_chat.db import pauses, sessions
from agent_chat.db.errors import StoreError
from agent_chat.db.models import SessionStatus
from agent_chat.state.base import AppState, client_connected
from agent_chat.state.rows import SessionRow, session_row

PAGE_SIZE = 50


class SidebarState(AppState):
    sessions: list[SessionRow] = []
    has_more: bool = False
    renaming_uuid: str = ""
    search: str = ""
    show_archived: bool = False
    _watch_gen: int = 0

    async def refresh(self) -> None:
        """Reload the first pages of the list (as many rows as are shown now)."""
        svc = self.svc()
        limit = max(PAGE_SIZE, len(self.sessions))
        rows = await svc.storage.call(
            sessions.list_sessions,
            limit=limit + 1,
            include_archived=self.show_archived,
            search=self.search,
        )
        waiting = await svc.storage.call(pauses.open_pauses_by_session)
        states = svc.runs.session_states()
        from agent_chat.state.chat import ChatState  # the chat state imports this module

        viewing = (await self.get_state(ChatState)).current_uuid
        shown = []
        for chat in rows[:limit]:
            state = states.get(chat.session_uuid, "")
            if not state and waiting.get(chat.id):
                state = "waiting"
            if not state and chat.unread and chat.session_uuid != viewing:
                state = "unread"
            shown.append(session_row(chat, state))
        self.sessions = shown
        self.has_more = len(rows) > limit

    @rx.event
    async def load_more(self) -> None:
        svc = self.svc()
        rows = await svc.storage.call(
            sessions.list_sessions,
            limit=PAGE_SIZE + 1,
            offset=len(self.sessions),
            include_archived=self.show_archived,
            search=self.search,
        )
        states = svc.runs.session_states()
        self.sessions = self.sessions + [
            session_row(c, states.get(c.session_uuid, "")) for c in rows[:PAGE_SIZE]
        ]
        self.has_more = len(rows) > PAGE_SIZE

    @rx.event
    async def set_search(self, value: str) -> None:
        self.search = value[:200]
        self.sessions = []
        await self.refresh()

    @rx.event
    async def toggle_archived(self) -> None:
        self.show_archived = not self.show_archived
        self.sessions = []
        await self.refresh()

    @rx.event
    async def set_archived(self, session_uuid: str, archived: bool) -> None:
        svc = self.svc()
        chat = await svc.storage.call(sessions.get_session, session_uuid=session_uuid)
        if chat is None:
            self.show_error("This conversation no longer exists.")
        else:
            status = SessionStatus.ARCHIVED if archived else SessionStatus.ACTIVE
            await svc.storage.call(sessions.set_session_status, session_id=chat.id, status=status)
        await self.refresh()

    @rx.event
    async def new_session(self):
        chat = await self.svc().storage.call(sessions.create_session)
        await self.refresh()
        return rx.redirect(routes.chat_url(chat.session_uuid))

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
            await self.svc().storage.call(
                sessions.rename_session, session_uuid=session_uuid, title=str(form.get("title", ""))
            )
        except (StoreError, ValueError) as exc:
            self.show_error(f"Could not rename: {exc}")
        await self.refresh()
        from agent_chat.state.chat import ChatState

        chat = await self.get_state(ChatState)
        if chat.current_uuid == session_uuid:
            await chat.reload_header()

    @rx.event
    async def delete(self, session_uuid: str):
        svc = self.svc()
        if svc.runs.live_for_session(session_uuid):
            self.show_error("This conversation is running: stop it before deleting it.")
            return None
        try:
            await svc.storage.call(sessions.delete_session, session_uuid=session_uuid)
        except StoreError as exc:
            self.show_error(f"Could not delete: {exc}")
        await self.refresh()
        from agent_chat.state.chat import ChatState

        chat = await self.get_state(ChatState)
        if chat.current_uuid == session_uuid:
            return rx.redirect(routes.INDEX)
        return None

    @rx.event(background=True)
    async def watch(self):
        """Keep the badges current while this tab is open: refresh when runs change."""
        async with self:
            self._watch_gen += 1
            gen = self._watch_gen
            token = self.router.session.client_token
        runs = self.svc().runs
        while True:
            changed = await runs.wait_activity(timeout=30)
            if not changed and not client_connected(token):
                return  # the tab is gone; its next load starts a new watcher
            await asyncio.sleep(0.05)
            follow = False
            async with self:
                if self._watch_gen != gen:
                    return  # a newer watcher (page reload) took over
                if changed:
                    await self.refresh()
                    from agent_chat.state.chat import ChatState

                    follow = await (await self.get_state(ChatState)).sync_with_runs()
            if follow:
                from agent_chat.state.chat import ChatState

                yield ChatState.follow_run
